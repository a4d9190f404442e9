package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Calls of downcall handles that return an {@code int} and take the errno capture segment first
 * (what {@link NativeLibrary#function} makes), by {@code invokeExact} with their exact argument
 * types. The connection path (rdma_cm, the queue pair's state changes) calls through these: a call
 * through {@code invokeWithArguments} boxes and adapts its arguments every time, which costs the
 * most where the JIT has not compiled it or the CPU is emulated.
 */
public final class Downcalls {
    private Downcalls() {
    }

    /** {@code h(errno, a)}. */
    public static int call1(MethodHandle h, MemorySegment a) {
        try {
            return (int) h.invokeExact(Errno.capture(), a);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code h(errno, a, b)}. */
    public static int call1i(MethodHandle h, MemorySegment a, int b) {
        try {
            return (int) h.invokeExact(Errno.capture(), a, b);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code h(errno, a, b)}. */
    public static int call2(MethodHandle h, MemorySegment a, MemorySegment b) {
        try {
            return (int) h.invokeExact(Errno.capture(), a, b);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code h(errno, a, b, c)}. */
    public static int call2i(MethodHandle h, MemorySegment a, MemorySegment b, int c) {
        try {
            return (int) h.invokeExact(Errno.capture(), a, b, c);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code h(errno, a, b, c)}. */
    public static int call3(MethodHandle h, MemorySegment a, MemorySegment b, MemorySegment c) {
        try {
            return (int) h.invokeExact(Errno.capture(), a, b, c);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code h(errno, a, b, c, d)}. */
    public static int call3i(MethodHandle h, MemorySegment a, MemorySegment b, MemorySegment c, int d) {
        try {
            return (int) h.invokeExact(Errno.capture(), a, b, c, d);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /** {@code t} to throw from a call: an error as it is, a checked exception wrapped. */
    public static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
