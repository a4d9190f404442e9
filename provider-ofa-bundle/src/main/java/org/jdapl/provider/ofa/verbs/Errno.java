package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.ref.WeakReference;

/** The {@code errno} a downcall captured, one capture buffer per thread. */
public final class Errno {
    private static final StructLayout LAYOUT = Linker.Option.captureStateLayout();
    /** Where errno lies in the capture buffer (read as a plain int: a layout's path handle costs more per call). */
    private static final long ERRNO_OFFSET = LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("errno"));
    private static final ThreadLocal<Buffer> BUFFER = ThreadLocal.withInitial(Buffer::new);
    /**
     * The buffer of the thread that asked last, in front of {@link #BUFFER}: the calls of a connection's
     * establishment come in runs from one thread (the consumer that polls, or the event thread), and a
     * {@code ThreadLocal} lookup costs each call a hash probe and, in code C1 compiled, a call into the
     * JVM ({@code Reference.refersTo}), about 250 instructions.
     *
     * <p>It names the thread by its id and holds the buffer weakly, so that it keeps neither alive: once
     * the thread has ended, its buffer is freed (the thread's {@code ThreadLocal} held it strongly),
     * whether or not another thread has asked since.
     */
    private static volatile Recent recent;

    private record Recent(long threadId, WeakReference<Buffer> buffer) {
    }

    /**
     * A thread's capture buffer: memory of an automatic arena (freed once the thread and its buffer are
     * gone), passed to downcalls as a view of the same address without an arena of its own, whose
     * acquire and release around each call do nothing (a shared arena's are atomic operations).
     */
    private static final class Buffer {
        /** Owns the memory: {@link #capture} is valid while this is reachable. */
        @SuppressWarnings("unused")
        private final MemorySegment memory;
        private final MemorySegment capture;

        Buffer() {
            memory = Arena.ofAuto().allocate(LAYOUT);
            capture = MemorySegment.ofAddress(memory.address()).reinterpret(LAYOUT.byteSize());
        }
    }

    /** EAGAIN. */
    public static final int EAGAIN = 11;
    /** ENOMEM. */
    public static final int ENOMEM = 12;
    /** EINVAL. */
    public static final int EINVAL = 22;
    /** EINTR. */
    public static final int EINTR = 4;
    /** ENODEV. */
    public static final int ENODEV = 19;
    /** EADDRINUSE. */
    public static final int EADDRINUSE = 98;
    /** ENOMEM is also what ibv_post_* return for a full queue. ENETUNREACH. */
    public static final int ENETUNREACH = 101;
    /** EHOSTUNREACH. */
    public static final int EHOSTUNREACH = 113;
    /** EADDRNOTAVAIL. */
    public static final int EADDRNOTAVAIL = 99;
    /** ETIMEDOUT. */
    public static final int ETIMEDOUT = 110;
    /** EOPNOTSUPP. */
    public static final int EOPNOTSUPP = 95;

    private Errno() {
    }

    /**
     * Calls a downcall made with {@code Linker.Option.captureCallState("errno")}, this thread's capture
     * buffer first, then {@code args}: the bindings' calls off the data path (those on it call
     * {@code invokeExact} with {@link #capture} themselves).
     */
    public static Object invoke(MethodHandle h, Object... args) {
        Object[] all = new Object[args.length + 1];
        all[0] = capture();
        System.arraycopy(args, 0, all, 1, args.length);
        try {
            return h.invokeWithArguments(all);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * This thread's capture buffer, to pass as the first argument of a downcall. The downcall writes
     * the errno it finds after the call into it; {@link #last} is read only after a call that failed,
     * which set errno.
     */
    public static MemorySegment capture() {
        long id = Thread.currentThread().threadId();
        Recent r = recent;
        if (r != null && r.threadId == id) {
            Buffer b = r.buffer.get();
            if (b != null) {
                return b.capture;
            }
        }
        Buffer b = BUFFER.get();
        recent = new Recent(id, new WeakReference<>(b));
        return b.capture;
    }

    /** The errno the last downcall of this thread captured. */
    public static int last() {
        return capture().get(ValueLayout.JAVA_INT, ERRNO_OFFSET);
    }
}
