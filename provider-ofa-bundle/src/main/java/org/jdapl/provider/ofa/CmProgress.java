package org.jdapl.provider.ofa;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Who takes an IA's rdma_cm events off its channel: the IA's event thread, or a consumer
 * busy-polling an EVD that only other threads fill (connection, CR and asynchronous events), which
 * then drives the connections' progress itself, as libfabric's manual progress has the application's
 * polls drive the provider (CONN_03: the ESTABLISHED event reaches a busy-polling consumer through the
 * rdma_cm event it takes).
 *
 * <p>A consumer that finds such an EVD empty holds a lease of the channel and takes the next ready
 * event itself, handling it inline ({@link #poll}). While a lease holds, the event thread leaves
 * the channel out of its {@code poll(2)} ({@link #leaseLeft}), so an arriving event wakes no thread:
 * the consumer, which runs anyway, takes it at its next poll. On a CPU that the consumer and the event
 * thread share, each event otherwise costs two context switches and the event thread's return from
 * and new call of {@code poll(2)}; a connection's establishment is three events at the active side and
 * two at the passive one. A lease ends {@link #LEASE_NANOS} after the consumer's last poll and the event
 * thread takes the channel back: a consumer that stops polling without waiting delays the next rdma_cm
 * event by that much at most. {@code -Djdapl.ofa.pollerProgressMillis=0} leaves every event to the
 * event thread.
 *
 * <p>Events are taken one at a time under one lock, by whichever thread: they are handled in the
 * channel's order. A consumer only tries the lock (another thread taking an event serves it too).
 *
 * <p>Behaviours: CONN_03.
 */
final class CmProgress {
    /** How long a consumer's lease of the channel lasts after its last poll (0: no leases). */
    static final long LEASE_NANOS = TimeUnit.MILLISECONDS.toNanos(Long.getLong("jdapl.ofa.pollerProgressMillis", 10));

    /** The shortest and the longest pause between a consumer's looks at the channel after it found it empty. */
    static final long BACKOFF_MIN_NANOS = 1_000;
    static final long BACKOFF_MAX_NANOS = 32_000;

    /** Takes one event off the channel and handles it; false if none was ready. */
    interface Taker {
        boolean takeCmEvent();
    }

    private final Taker taker;
    /** {@link System#nanoTime}. */
    private final LongSupplier clock;
    private final ReentrantLock lock = new ReentrantLock();
    /** When the lease ends (on {@link #clock}); in the past while no consumer holds one. */
    private volatile long leaseEnd;
    /** The channel is gone (IA close): nobody takes an event. Guarded by {@link #lock}. */
    private boolean closed;
    /**
     * When consumers look at the channel next ({@link System#nanoTime}), and the pause after the last
     * look that found it empty (0 after one that took an event). Written under {@link #lock}; read
     * without it (a stale value costs one look more or less).
     */
    private volatile long nextLook;
    private long backoff;

    CmProgress(Taker taker) {
        this(taker, System::nanoTime);
    }

    CmProgress(Taker taker, LongSupplier clock) {
        this.taker = taker;
        this.clock = clock;
        long now = clock.getAsLong();
        leaseEnd = now - 1;
        nextLook = now;
    }

    /**
     * A consumer found an EVD without a CQ empty: renews its lease and, if no other thread is taking
     * one, takes the next ready event and handles it (which may queue an event on that EVD); with
     * leases off, yields the CPU to the event thread instead. After a
     * look that found the channel empty, the next is due after a pause that doubles from {@link
     * #BACKOFF_MIN_NANOS} to {@link #BACKOFF_MAX_NANOS} while nothing comes, and is 0 after a look that
     * took an event (events come in bursts): each look is a system call that takes the channel's
     * lock, which the kernel also takes to queue an event there, on the peer's CPU as often as not,
     * and a consumer spinning on it in the kernel slows the very events it waits for. Between looks
     * the poll costs a clock read.
     *
     * @return whether an event was handled
     */
    boolean poll() {
        if (LEASE_NANOS <= 0) {
            // Only the event thread takes events: let it run, should it share this CPU (woken while the
            // consumer runs, it would otherwise wait for the scheduler's next switch).
            Thread.yield();
            return false;
        }
        long now = clock.getAsLong();
        if (leaseEnd - now < LEASE_NANOS / 2) {
            leaseEnd = now + LEASE_NANOS;
        }
        if (now - nextLook < 0 || !lock.tryLock()) {
            return false;
        }
        try {
            boolean took = !closed && taker.takeCmEvent();
            backoff = took ? 0 : Math.min(BACKOFF_MAX_NANOS, Math.max(BACKOFF_MIN_NANOS, 2 * backoff));
            nextLook = now + backoff;
            return took;
        } finally {
            lock.unlock();
        }
    }

    /** How long a consumer's lease still holds, in nanoseconds (0 or less: the channel is the event thread's). */
    long leaseLeft() {
        return LEASE_NANOS <= 0 ? 0 : leaseEnd - clock.getAsLong();
    }

    /** The event thread's take: the channel was readable and no lease holds. */
    void take() {
        lock.lock();
        try {
            if (!closed) {
                taker.takeCmEvent();
            }
        } finally {
            lock.unlock();
        }
    }

    /** At IA close, before the channel goes: no event is taken after this returns. */
    void close() {
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
    }
}
