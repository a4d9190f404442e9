package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.ref.Reference;

/**
 * Calls of downcall handles that return an {@code int} and take the errno capture segment first
 * (what {@link NativeLibrary#function} makes), by {@code invokeExact} with their exact argument
 * types. The connection path (rdma_cm, the queue pair's state changes) calls through these: a call
 * through {@code invokeWithArguments} boxes and adapts its arguments every time, which costs the
 * most where the JIT has not compiled it or the CPU is emulated.
 *
 * <p>Their pointer parameters are declared {@link #POINTER} (a {@code long}), and a segment goes as its
 * address, as the data path's do ({@link VerbsContext}): a segment argument costs each call its
 * checks and its arena's acquire and release (atomic operations for a shared arena), which C1 does not
 * compile away. The caller's segments stay reachable until the call has returned
 * ({@link Reference#reachabilityFence}), so that memory an automatic arena owns is not freed meanwhile.
 */
public final class Downcalls {
    /** The layout of a pointer parameter of the handles called here: its address, as a {@code long}. */
    public static final ValueLayout.OfLong POINTER = ValueLayout.JAVA_LONG;

    private Downcalls() {
    }

    /** {@code h(errno, a)}. */
    public static int call1(MethodHandle h, MemorySegment a) {
        try {
            return (int) h.invokeExact(Errno.capture(), a.address());
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            Reference.reachabilityFence(a);
        }
    }

    /** {@code h(errno, a, b)}. */
    public static int call1i(MethodHandle h, MemorySegment a, int b) {
        try {
            return (int) h.invokeExact(Errno.capture(), a.address(), b);
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            Reference.reachabilityFence(a);
        }
    }

    /** {@code h(errno, a, b)}. */
    public static int call2(MethodHandle h, MemorySegment a, MemorySegment b) {
        try {
            return (int) h.invokeExact(Errno.capture(), a.address(), b.address());
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            Reference.reachabilityFence(a);
            Reference.reachabilityFence(b);
        }
    }

    /** {@code h(errno, a, b, c)}. */
    public static int call2i(MethodHandle h, MemorySegment a, MemorySegment b, int c) {
        try {
            return (int) h.invokeExact(Errno.capture(), a.address(), b.address(), c);
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            Reference.reachabilityFence(a);
            Reference.reachabilityFence(b);
        }
    }

    /** {@code h(errno, a, b, c)}. */
    public static int call3(MethodHandle h, MemorySegment a, MemorySegment b, MemorySegment c) {
        try {
            return (int) h.invokeExact(Errno.capture(), a.address(), b.address(), c.address());
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            Reference.reachabilityFence(a);
            Reference.reachabilityFence(b);
            Reference.reachabilityFence(c);
        }
    }

    /** {@code h(errno, a, b, c, d)}. */
    public static int call3i(MethodHandle h, MemorySegment a, MemorySegment b, MemorySegment c, int d) {
        try {
            return (int) h.invokeExact(Errno.capture(), a.address(), b.address(), c.address(), d);
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            Reference.reachabilityFence(a);
            Reference.reachabilityFence(b);
            Reference.reachabilityFence(c);
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
