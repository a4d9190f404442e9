package org.jdapl.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Binds the calling thread to one CPU for a ping-pong measurement (Linux {@code sched_setaffinity}),
 * so that each hand-over between the two ends is a context switch on that CPU. Left to the
 * scheduler, the two ends of a ping-pong land on one CPU in some runs and on two in others, and on a
 * virtual machine a wake-up of an idle vCPU passes through the hypervisor: tens of microseconds that
 * change from run to run and swamp what is measured. Elsewhere than on Linux it does nothing. The
 * Soft-RoCE benchmarks of the OFA provider bind each end of their ping-pong with {@link #bind}, as
 * {@code taskset -c} binds perftest's processes.
 */
public final class CpuPinning {
    private static final long SET_BYTES = 128; // cpu_set_t: 1024 CPUs
    private static final MethodHandle SET_AFFINITY;
    private static final MethodHandle GET_AFFINITY;
    private static final MethodHandle GET_CPU;

    static {
        Linker linker = Linker.nativeLinker();
        MethodHandle set = null;
        MethodHandle get = null;
        MethodHandle cpu = null;
        if (System.getProperty("os.name", "").startsWith("Linux")) {
            FunctionDescriptor affinity = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
            set = find(linker, "sched_setaffinity", affinity);
            get = find(linker, "sched_getaffinity", affinity);
            cpu = find(linker, "sched_getcpu", FunctionDescriptor.of(ValueLayout.JAVA_INT));
        }
        SET_AFFINITY = set;
        GET_AFFINITY = get;
        GET_CPU = cpu;
    }

    private CpuPinning() {
    }

    private static MethodHandle find(Linker linker, String name, FunctionDescriptor descriptor) {
        Optional<MemorySegment> symbol = linker.defaultLookup().find(name);
        return symbol.map(s -> linker.downcallHandle(s, descriptor)).orElse(null);
    }

    /** Whether threads can be bound here. */
    public static boolean available() {
        return SET_AFFINITY != null && GET_AFFINITY != null && GET_CPU != null;
    }

    /** The CPU the calling thread runs on, or -1. */
    public static int currentCpu() {
        if (!available()) {
            return -1;
        }
        try {
            return (int) GET_CPU.invokeExact();
        } catch (Throwable t) {
            return -1;
        }
    }

    /**
     * Binds the calling thread to {@code cpu} (nothing if {@code cpu} is negative or binding is not
     * available) and returns what undoes it.
     */
    public static Runnable pin(int cpu) {
        if (cpu < 0 || cpu >= SET_BYTES * 8 || !available()) {
            return () -> { };
        }
        Arena arena = Arena.ofShared();
        try {
            MemorySegment before = arena.allocate(SET_BYTES, 8);
            if ((int) GET_AFFINITY.invokeExact(0, SET_BYTES, before) != 0) {
                arena.close();
                return () -> { };
            }
            MemorySegment only = arena.allocate(SET_BYTES, 8);
            only.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            if ((int) SET_AFFINITY.invokeExact(0, SET_BYTES, only) != 0) {
                arena.close();
                return () -> { };
            }
            return () -> {
                try {
                    int ignored = (int) SET_AFFINITY.invokeExact(0, SET_BYTES, before);
                } catch (Throwable t) {
                    // the thread keeps its one CPU
                } finally {
                    arena.close();
                }
            };
        } catch (Throwable t) {
            arena.close();
            return () -> { };
        }
    }

    /**
     * Binds the calling thread to {@code cpu} for good (nothing if {@code cpu} is negative); unlike
     * {@link #pin} it fails where the thread cannot be bound.
     *
     * @throws IllegalStateException if binding is not available here or the kernel refuses it
     */
    public static void bind(int cpu) {
        if (cpu < 0) {
            return;
        }
        if (cpu >= SET_BYTES * 8 || !available()) {
            throw new IllegalStateException("cannot bind a thread to CPU " + cpu + " here");
        }
        int r;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment only = arena.allocate(SET_BYTES, 8);
            only.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            r = (int) SET_AFFINITY.invokeExact(0, SET_BYTES, only);
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity to CPU " + cpu, t);
        }
        if (r != 0) {
            throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed");
        }
    }
}
