package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The lock of one EP, taken by every post and every completion of its queue pair. Reentrant (the
 * connection paths call each other under it). Uncontended, taking it is one compare-and-set and
 * giving it back one release store: a {@code ReentrantLock}'s release is a volatile store, which
 * costs a full fence, and that fence would come three times per message of a ping-pong. Without a
 * queue of waiters the release need not look for anyone to wake, so a contended acquirer waits as
 * {@link LockBackoff} does (the EP's connection paths hold the lock across rdma_cm and modify-QP
 * calls, which are short).
 */
final class EpLock {
    private static final VarHandle OWNER = VarHandles.field(MethodHandles.lookup(), "owner", long.class);

    /**
     * The {@link Thread#threadId() id} of the holding thread, or 0; accessed through {@link #OWNER} only.
     * An id, not the Thread: a reference stored by compare-and-set also marks the collector's card table.
     */
    @SuppressWarnings("unused")
    private long owner;
    /** How many times the owner holds it; read and written by the owner only. */
    private int holds;

    void lock() {
        long me = Thread.currentThread().threadId();
        if (!OWNER.compareAndSet(this, 0L, me)) {
            if ((long) OWNER.getOpaque(this) == me) {
                holds++;
                return;
            }
            acquireContended(me);
        }
        holds = 1;
    }

    /**
     * {@link #lock} for the IA's event thread, whose events often find the lock held by the consumer
     * thread that caused them (an ADDR_RESOLVED arrives while {@code dat_ep_connect}, which called
     * {@code rdma_resolve_addr}, still holds it): if the holder shares the CPU, a yield hands it the
     * CPU until the scheduler's next tick, so this waits by short naps instead, from which the
     * event thread wakes to take the lock as soon as the holder has let it go.
     */
    void lockFromEventThread() {
        long me = Thread.currentThread().threadId();
        if (OWNER.compareAndSet(this, 0L, me)) {
            holds = 1;
            return;
        }
        if ((long) OWNER.getOpaque(this) == me) {
            holds++;
            return;
        }
        for (int i = 0; !OWNER.compareAndSet(this, 0L, me); i++) {
            LockBackoff.nap(this, i);
        }
        holds = 1;
    }

    private void acquireContended(long me) {
        for (int i = 0; !OWNER.compareAndSet(this, 0L, me); i++) {
            LockBackoff.pause(this, i);
        }
    }

    void unlock() {
        if ((long) OWNER.getOpaque(this) != Thread.currentThread().threadId()) {
            throw new IllegalMonitorStateException("the EP lock is not held by " + Thread.currentThread());
        }
        if (--holds == 0) {
            OWNER.setRelease(this, 0L);
        }
    }

    /** Whether the calling thread holds the lock. */
    boolean isHeldByCurrentThread() {
        return (long) OWNER.getOpaque(this) == Thread.currentThread().threadId();
    }
}
