package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The lock that serialises the polling of one completion queue. Every {@code dat_evd_dequeue} of a
 * busy-polling consumer takes it, so an uncontended acquire is one compare-and-set and a release
 * one release store (a {@code ReentrantLock} adds a full fence and its queue bookkeeping). Holders
 * poll a batch of completions and hand them to their EPs, so a contended acquire waits as
 * {@link LockBackoff} does. Not reentrant.
 */
final class PollLock {
    private static final VarHandle HELD = VarHandles.field(MethodHandles.lookup(), "held", int.class);

    /** 1 while held; accessed through {@link #HELD} only. */
    @SuppressWarnings("unused")
    private int held;

    boolean tryLock() {
        return HELD.compareAndSet(this, 0, 1);
    }

    void lock() {
        for (int i = 0; !tryLock(); i++) {
            LockBackoff.pause(this, i);
        }
    }

    void unlock() {
        HELD.setRelease(this, 0);
    }
}
