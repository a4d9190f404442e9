package org.jdapl.provider.ofa;

import java.util.concurrent.locks.LockSupport;

/**
 * How the provider's compare-and-set locks ({@link PollLock}, {@link EpLock}) wait when taken: they
 * have no queue of waiters (so that a release stays one store), so a waiter spins briefly, then
 * yields, then naps for short periods; their holders do short work.
 */
final class LockBackoff {
    private static final int SPINS = 64;
    private static final int YIELDS = 64;
    private static final long NAP_NANOS = 20_000;

    private LockBackoff() {
    }

    /** Waits before attempt {@code attempt + 1} to take {@code lock}: spins, then naps, never yields. */
    static void nap(Object lock, int attempt) {
        if (attempt < SPINS) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(lock, NAP_NANOS);
        }
    }

    /** Waits before attempt {@code attempt + 1} to take {@code lock}. */
    static void pause(Object lock, int attempt) {
        if (attempt < SPINS) {
            Thread.onSpinWait();
        } else if (attempt < SPINS + YIELDS) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(lock, NAP_NANOS);
        }
    }
}
