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
    private static final VarHandle OWNER = VarHandles.field(MethodHandles.lookup(), "owner", Thread.class);

    /** The holding thread, or null; accessed through {@link #OWNER} only. */
    @SuppressWarnings("unused")
    private Thread owner;
    /** How many times the owner holds it; read and written by the owner only. */
    private int holds;

    void lock() {
        Thread me = Thread.currentThread();
        if (!OWNER.compareAndSet(this, (Thread) null, me)) {
            if (OWNER.getOpaque(this) == me) {
                holds++;
                return;
            }
            acquireContended(me);
        }
        holds = 1;
    }

    private void acquireContended(Thread me) {
        for (int i = 0; !OWNER.compareAndSet(this, (Thread) null, me); i++) {
            LockBackoff.pause(this, i);
        }
    }

    void unlock() {
        if (OWNER.getOpaque(this) != Thread.currentThread()) {
            throw new IllegalMonitorStateException("the EP lock is not held by " + Thread.currentThread());
        }
        if (--holds == 0) {
            OWNER.setRelease(this, (Thread) null);
        }
    }

    /** Whether the calling thread holds the lock. */
    boolean isHeldByCurrentThread() {
        return OWNER.getOpaque(this) == Thread.currentThread();
    }
}
