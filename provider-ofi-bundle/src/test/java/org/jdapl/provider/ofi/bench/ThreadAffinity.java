package org.jdapl.provider.ofi.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Binds the calling thread to one CPU ({@code sched_setaffinity(0, ...)}), as {@code taskset -c}
 * binds {@code fi_pingpong}'s processes: on the Soft-RoCE guest's two vCPUs each end of a ping-pong
 * gets a vCPU of its own, as the OFA provider's benchmark there does. Linux only.
 */
final class ThreadAffinity {
    private static final long SET_BYTES = 128; // cpu_set_t: 1024 CPUs
    private static MethodHandle setAffinity;

    private ThreadAffinity() {
    }

    private static synchronized MethodHandle handle() {
        if (setAffinity == null) {
            Linker linker = Linker.nativeLinker();
            setAffinity = linker.downcallHandle(linker.defaultLookup().find("sched_setaffinity").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                            ValueLayout.ADDRESS));
        }
        return setAffinity;
    }

    /** Binds the calling thread to {@code cpu}; nothing when {@code cpu} is negative. */
    static void pin(int cpu) {
        if (cpu < 0) {
            return;
        }
        if (cpu >= SET_BYTES * 8) {
            throw new IllegalArgumentException("CPU " + cpu);
        }
        MethodHandle set = handle();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(SET_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            int rc = (int) set.invokeExact(0, SET_BYTES, mask);
            if (rc != 0) {
                throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
