package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.stream.Stream;
import org.jdapl.dat.Dat;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.OfaProvider;
import org.junit.jupiter.api.Test;

/**
 * Many IA open/use/close cycles: file descriptors, memory mappings, the kernel's RDMA resources
 * ({@code rdma resource show}), the C heap ({@code mallinfo2}) and threads do not grow.
 */
class LeakDeviceTest {
    private static final int CYCLES = 40;

    @Test
    void openCloseCyclesLeakNoDescriptorsMappingsHeapOrThreads() throws Throwable {
        RxeDevice.require();
        OfaProvider provider = new OfaProvider();
        for (int i = 0; i < CYCLES / 2; i++) {
            cycle(provider, i);
        }
        settle();
        long fds0 = count("/proc/self/fd");
        long maps0 = lines("/proc/self/maps");
        long heap0 = mallocInUse();
        String rdma0 = rdmaResources();
        int threads0 = Thread.activeCount();
        for (int i = 0; i < CYCLES; i++) {
            cycle(provider, i);
        }
        settle();
        long fds = count("/proc/self/fd");
        long maps = lines("/proc/self/maps");
        long heap = mallocInUse();
        String rdma = rdmaResources();
        System.out.println("kernel RDMA resources before: " + rdma0 + "; after: " + rdma);
        System.out.printf("leak check over %d IA cycles: fds %d -> %d, mappings %d -> %d, malloc in use %d -> %d "
                + "bytes, threads %d -> %d%n", CYCLES, fds0, fds, maps0, maps, heap0, heap, threads0,
                Thread.activeCount());
        assertTrue(fds <= fds0, "file descriptors grew from " + fds0 + " to " + fds);
        assertTrue(maps <= maps0 + 8, "memory mappings grew from " + maps0 + " to " + maps);
        // Every verbs object (context, PD, CQ, QP, MR, MW, cm_id) is counted exactly by the kernel.
        assertEquals(rdma0, rdma, "kernel RDMA resources changed");
        // The C heap also holds the JVM's own allocations (threads, compiler, GC), which move by tens of
        // KiB per cycle; this bound catches a leak of registered or queue memory, not small structs.
        assertTrue(heap - heap0 < CYCLES * 128 * 1024L, "C heap grew by " + (heap - heap0) + " bytes");
        assertTrue(Thread.activeCount() <= threads0, "threads grew");
        assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
    }

    /** Lets the garbage collector free what automatic arenas hold (per-thread errno buffers). */
    private static void settle() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
    }

    private static void cycle(OfaProvider provider, int i) {
        try (InterfaceAdapter ia = RxeDevice.open(provider); Arena arena = Arena.ofConfined()) {
            ProtectionZone pz = ia.createPz();
            EventDispatcher dto = ia.createEvd(32, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher cr = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR, EvdFlag.CONNECTION));
            ia.createLmr(pz, arena.allocate(16384, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            ia.createEp(pz, dto, dto, cr, null);
            ia.createPspAny(cr, PspFlag.CONSUMER);
            if (i % 2 == 0) {
                if (Boolean.parseBoolean(ia.query().attributes().specific().get("mw_type1"))) {
                    pz.createRmr();
                }
            }
        }
    }

    /** {@code rdma resource show}: the kernel's count of PDs, CQs, QPs, cm_ids, MRs and contexts per device. */
    private static String rdmaResources() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0, out);
        return out;
    }

    private static long count(String dir) throws IOException {
        try (Stream<Path> s = Files.list(Path.of(dir))) {
            return s.count();
        }
    }

    private static long lines(String file) throws IOException {
        try (Stream<String> s = Files.lines(Path.of(file))) {
            return s.count();
        }
    }

    /** glibc {@code mallinfo2().uordblks}: bytes of C heap in use. */
    private static long mallocInUse() throws Throwable {
        Linker linker = Linker.nativeLinker();
        var layout = java.lang.foreign.MemoryLayout.structLayout(
                java.lang.foreign.MemoryLayout.sequenceLayout(10, ValueLayout.JAVA_LONG));
        MethodHandle mallinfo2 = linker.downcallHandle(linker.defaultLookup().find("mallinfo2").orElseThrow(),
                FunctionDescriptor.of(layout));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment r = (MemorySegment) mallinfo2.invokeExact((java.lang.foreign.SegmentAllocator) a);
            return r.get(ValueLayout.JAVA_LONG, 7 * 8); // uordblks
        }
    }
}
