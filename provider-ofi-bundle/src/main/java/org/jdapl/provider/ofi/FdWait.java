package org.jdapl.provider.ofi;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiLayouts;

/**
 * How the progress thread blocks while nothing happens: in {@code poll(2)} on the wait file
 * descriptors of the IA's CQs and EQ ({@code FI_WAIT_FD}, {@code fi_control(FI_GETWAIT)}) and an
 * {@code eventfd} that {@link #wake} writes, after {@code fi_trywait} has said that the objects hold
 * nothing to read (libfabric's rule before a wait on its file descriptors). A socket of the provider
 * that becomes readable wakes the thread at once: the target of an RDMA Write or a send needs no
 * consumer call to make progress, and an idle IA costs no CPU. The libc calls are made through
 * {@code java.lang.foreign} like libfabric's. Used by the progress thread only, but {@link #wake}.
 */
final class FdWait implements AutoCloseable {
    private static final Linker L = Linker.nativeLinker();
    private static final MethodHandle POLL = libc("poll", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle EVENTFD = libc("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle READ = libc("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle WRITE = libc("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle CLOSE = libc("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final int EFD_NONBLOCK = 04000;
    private static final int EFD_CLOEXEC = 02000000;
    private static final short POLLIN = 1;

    private final Arena arena = Arena.ofShared();
    private final int wakeFd;
    private final MemorySegment wakeWord = arena.allocate(8, 8);
    private final MemorySegment readWord = arena.allocate(8, 8);
    private MemorySegment pollfds;
    private MemorySegment fids;
    /** The objects {@code fi_trywait} is asked about: those of {@link #fids} not skipped. */
    private MemorySegment tryFids;
    private int[] fds = new int[0];
    private boolean[] skipped = new boolean[0];
    private int count;
    /** The fabric's {@code fi_trywait}, resolved at the first wait ({@link FiCalls#trywaitFn}). */
    private MemorySegment trywait;
    private volatile boolean closed;

    FdWait() {
        int fd;
        try {
            fd = (int) EVENTFD.invokeExact(0, EFD_NONBLOCK | EFD_CLOEXEC);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        wakeFd = fd;
        wakeWord.set(JAVA_LONG, 0, 1L);
        set(new long[0], new int[0]);
    }

    /**
     * Opens a CQ ({@code attr} filled but its wait object) with {@code FI_WAIT_FD}, or with none where
     * the provider refuses it: the CQ and its wait file descriptor (-1 without).
     */
    static long[] cqOpen(long domain, MemorySegment attr) {
        attr.set(JAVA_INT, FiLayouts.CQ_ATTR_WAIT_OBJ, Fi.FI_WAIT_FD);
        try {
            long cq = FiCalls.cqOpen(domain, attr.address(), 0);
            return new long[] {cq, waitFd(cq)};
        } catch (FiException e) {
            attr.set(JAVA_INT, FiLayouts.CQ_ATTR_WAIT_OBJ, Fi.FI_WAIT_NONE);
            return new long[] {FiCalls.cqOpen(domain, attr.address(), 0), -1};
        }
    }

    /** As {@link #cqOpen}, for an EQ. */
    static long[] eqOpen(long fabric, MemorySegment attr) {
        attr.set(JAVA_INT, FiLayouts.EQ_ATTR_WAIT_OBJ, Fi.FI_WAIT_FD);
        try {
            long eq = FiCalls.eqOpen(fabric, attr.address(), 0);
            return new long[] {eq, waitFd(eq)};
        } catch (FiException e) {
            attr.set(JAVA_INT, FiLayouts.EQ_ATTR_WAIT_OBJ, Fi.FI_WAIT_NONE);
            return new long[] {FiCalls.eqOpen(fabric, attr.address(), 0), -1};
        }
    }

    /** {@code fi_control(fid, FI_GETWAIT, &fd)}: the wait file descriptor, -1 if there is none. */
    private static int waitFd(long fid) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment fd = a.allocate(JAVA_INT);
            return FiCalls.control(fid, Fi.FI_GETWAIT, fd.address()) == 0 ? fd.get(JAVA_INT, 0) : -1;
        } catch (FiException e) {
            return -1;
        }
    }

    private static MethodHandle libc(String name, FunctionDescriptor d) {
        return L.downcallHandle(L.defaultLookup().find(name).orElseThrow(), d);
    }

    /** Whether the thread can block here (the eventfd exists). */
    boolean usable() {
        return wakeFd >= 0;
    }

    /** The libfabric objects to wait on ({@code fids}) and their wait file descriptors. */
    void set(long[] objects, int[] fds) {
        count = objects.length;
        pollfds = arena.allocate(8L * (count + 1), 8);
        fids = arena.allocate(8L * Math.max(1, count), 8);
        tryFids = arena.allocate(8L * Math.max(1, count), 8);
        this.fds = fds.clone();
        skipped = new boolean[count];
        for (int i = 0; i < count; i++) {
            fids.setAtIndex(JAVA_LONG, i, objects[i]);
            pollfds.set(JAVA_INT, 8L * i, fds[i]);
            pollfds.set(JAVA_SHORT, 8L * i + 4, POLLIN);
        }
        pollfds.set(JAVA_INT, 8L * count, wakeFd);
        pollfds.set(JAVA_SHORT, 8L * count + 4, POLLIN);
    }

    /**
     * Leaves object {@code i} out of the next waits ({@code skip}) or takes it back: poll(2) ignores a
     * negative descriptor, and {@code fi_trywait} is not asked about it.
     */
    void skip(int i, boolean skip) {
        if (i < count && skipped[i] != skip) {
            skipped[i] = skip;
            pollfds.set(JAVA_INT, 8L * i, skip ? -1 : fds[i]);
        }
    }

    /**
     * Blocks for up to {@code timeoutMillis} until a wait object not skipped or the eventfd is
     * readable; returns at once if {@code fi_trywait} says there is something to read.
     */
    void await(long fabric, int timeoutMillis) {
        int asked = 0;
        for (int i = 0; i < count; i++) {
            if (!skipped[i]) {
                tryFids.setAtIndex(JAVA_LONG, asked++, fids.getAtIndex(JAVA_LONG, i));
            }
        }
        if (trywait == null) {
            trywait = FiCalls.trywaitFn(fabric);
        }
        if (asked > 0 && FiCalls.trywait(trywait, fabric, tryFids.address(), asked) != 0) {
            return;
        }
        for (int i = 0; i <= count; i++) {
            pollfds.set(JAVA_SHORT, 8L * i + 6, (short) 0);
        }
        try {
            int n = (int) POLL.invokeExact(pollfds.address(), (long) (count + 1), timeoutMillis);
            if (n > 0 && pollfds.get(JAVA_SHORT, 8L * count + 6) != 0) {
                long r = (long) READ.invokeExact(wakeFd, readWord.address(), 8L);
                assert r == 8 || r < 0;
            }
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Wakes the thread blocked in {@link #await} (or makes its next await return at once). */
    void wake() {
        if (wakeFd >= 0 && !closed) {
            try {
                long r = (long) WRITE.invokeExact(wakeFd, wakeWord.address(), 8L);
                assert r == 8 || r < 0;
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (wakeFd >= 0) {
            try {
                int r = (int) CLOSE.invokeExact(wakeFd);
                assert r == 0 || r < 0;
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
        arena.close();
    }
}
