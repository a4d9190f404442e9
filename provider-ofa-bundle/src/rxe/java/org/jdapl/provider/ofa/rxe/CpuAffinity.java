package org.jdapl.provider.ofa.rxe;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.NativeLibrary;

/**
 * Binds the calling thread to one CPU with Linux's {@code sched_setaffinity}, as {@code taskset -c}
 * binds a process: the benchmark keeps each end of its ping-pong on a vCPU of its own, where
 * perftest's two processes are bound the same way.
 */
final class CpuAffinity {
    /** A {@code cpu_set_t} of 1024 CPUs. */
    private static final int SET_BYTES = 128;
    private static final MethodHandle SCHED_SETAFFINITY = NativeLibrary.libc().function("sched_setaffinity",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                    ValueLayout.ADDRESS));

    private CpuAffinity() {
    }

    /** Binds the calling thread to {@code cpu}; a negative {@code cpu} leaves it as it is. */
    static void bind(int cpu) {
        if (cpu < 0) {
            return;
        }
        if (cpu >= SET_BYTES * 8) {
            throw new IllegalArgumentException("CPU " + cpu + " is beyond the affinity mask");
        }
        int r;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment set = arena.allocate(SET_BYTES, 8);
            set.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            r = (int) SCHED_SETAFFINITY.invokeExact(Errno.capture(), 0, (long) SET_BYTES, set);
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity to CPU " + cpu, t);
        }
        if (r != 0) {
            throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed: errno " + Errno.last());
        }
    }
}
