package org.jdapl.provider.emu;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock of one EP's sending side: its request queue and, on a connection whose link moves data in
 * the poster's thread, the taking of the peer's receives. The EP's posting threads take it on the
 * common send path without the IA's domain lock, so it is a line of its own (padded on both sides)
 * that stays in the cache of the thread that sends; the link's engine and the connection's rare
 * paths (close, flush) take it under the domain lock, never the other way round: the lock order of
 * the provider is written down once, in {@link LockDomain}.
 *
 * <p>Reentrant: an error completion under it may break the connection, which closes the link, which
 * takes the locks of both ends. A contended acquire spins briefly, then yields, then parks for short
 * intervals (a holder copies at most one message).
 */
public final class SendLock extends SendLockFields {
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(SendLockFields.class, "owner", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * How many send locks each thread holds, counted only with assertions enabled (the tests), for the
     * lock-order check of {@link LockDomain#acquire}.
     */
    private static final ThreadLocal<int[]> HELD = ThreadLocal.withInitial(() -> new int[1]);

    @SuppressWarnings("unused")
    private long a0, a1, a2, a3, a4, a5, a6, a7;

    /** Counts a send lock taken (+1) or released (-1) by this thread; true, for use in an assert. */
    private static boolean count(int delta) {
        HELD.get()[0] += delta;
        return true;
    }

    /** Whether this thread holds a send lock (known only with assertions enabled; false otherwise). */
    static boolean anyHeldByCurrentThread() {
        return HELD.get()[0] > 0;
    }

    public void lock() {
        long self = Thread.currentThread().threadId();
        if (owner == self) {
            holds++;
            return;
        }
        int spins = 0;
        while (!OWNER.compareAndSet(this, 0L, self)) {
            if (++spins < 100) {
                Thread.onSpinWait();
            } else if (spins < 1_000) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
        holds = 1;
        assert count(1);
    }

    public void unlock() {
        if (owner != Thread.currentThread().threadId()) {
            throw new IllegalMonitorStateException("the send lock is not held by this thread");
        }
        if (--holds == 0) {
            OWNER.setRelease(this, 0L);
            assert count(-1);
        }
    }

    boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread().threadId();
    }
}

/** Keeps the lock's line apart from whatever precedes the object. */
abstract class SendLockPad {
    @SuppressWarnings("unused")
    long p0, p1, p2, p3, p4, p5, p6, p7;
}

abstract class SendLockFields extends SendLockPad {
    /**
     * The holder's {@link Thread#threadId} (positive), or 0; set by compare-and-set, cleared by a
     * release store. An id rather than the {@code Thread}: neither store is a reference store, which
     * would cost the collector's write barriers on every send.
     */
    volatile long owner;
    /** How often the owner holds it (written by the owner only). */
    int holds;
}
