package org.jdapl.provider.ofi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.spi.IaSpec;

/**
 * A JVM of its own (no shm endpoint before it) that opens a shm IA and a PSP, then prints whether the
 * process's SIGSEGV, SIGBUS, SIGTERM and SIGINT handlers are still the ones it had ({@code kept}) and
 * whether the PSP's shm region is still in {@code /dev/shm} after the JVM took a SIGSEGV of its own
 * (an implicit null check in compiled code): {@code region: present}.
 */
public final class ShmSignalsMain {
    private static final int[] SIGNALS = {2, 7, 11, 15};

    public static void main(String[] args) throws Throwable {
        Linker l = Linker.nativeLinker();
        MethodHandle sigaction = l.downcallHandle(l.defaultLookup().find("sigaction").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        long[] before = handlers(sigaction);
        int port = 20000 + (int) (ProcessHandle.current().pid() % 20000);
        try (InterfaceAdapter ia = new OfiProvider().open(new IaSpec("s", "shm", "", true, "t"), 8)) {
            EventDispatcher crs = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            ia.createPsp(port, crs, PspFlag.CONSUMER);
            long[] after = handlers(sigaction);
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < SIGNALS.length; i++) {
                if (before[i] != after[i]) {
                    out.append(" replaced:").append(SIGNALS[i]);
                }
            }
            System.out.println("handlers:" + (out.isEmpty() ? " kept" : out));
            byte[] name = RdmListener.pspName(port);
            int fault = 0;
            for (int i = 0; i < 200_000; i++) {
                fault += length(i % 2 == 0 ? "a" : "bb");
            }
            try {
                fault += length(null);
            } catch (NullPointerException e) {
                fault++;
            }
            Path region = Path.of("/dev/shm", RdmLocal.key(name));
            System.out.println("region: " + (Files.exists(region) ? "present" : "absent") + " " + region + " " + fault);
        }
    }

    private static int length(String s) {
        return s.length();
    }

    private static long[] handlers(MethodHandle sigaction) throws Throwable {
        long[] h = new long[SIGNALS.length];
        try (Arena a = Arena.ofConfined()) {
            MemorySegment act = a.allocate(256, 8);
            for (int i = 0; i < SIGNALS.length; i++) {
                int rc = (int) sigaction.invokeExact(SIGNALS[i], MemorySegment.NULL, act);
                if (rc != 0) {
                    throw new IllegalStateException("sigaction " + SIGNALS[i]);
                }
                h[i] = act.get(ValueLayout.JAVA_LONG, 0);
            }
        }
        return h;
    }
}
