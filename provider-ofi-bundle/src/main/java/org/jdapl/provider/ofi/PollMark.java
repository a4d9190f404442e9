package org.jdapl.provider.ofi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Whether a consumer is polling an EVD ({@link OfiEvd#dequeue}), as the IA's progress thread sees it
 * ({@link OfiProgress}): while it is, the thread leaves the EVD's CQ to that consumer. A consumer's
 * poll reads no clock: it bumps a counter ({@link #polled}, an opaque write, no fence). The progress
 * thread, which reads the clock in its loop anyway, compares the counter with the value it saw last
 * and remembers when it last changed ({@link #polledRecently}): the EVD counts as polled while the
 * counter changed within {@link #POLLING_NANOS} of the thread's clock. A wait that begins, on the EVD
 * or on a CNO, clears the mark at once ({@link #consumerSleeps}): the waiter depends on the progress
 * thread once it sleeps; a poll after that marks the EVD again.
 */
final class PollMark {
    /** How long after a change of the counter the progress thread leaves the EVD's CQ to its consumer: 1 ms. */
    static final long POLLING_NANOS = 1_000_000;
    private static final VarHandle POLLS;

    static {
        try {
            POLLS = MethodHandles.lookup().findVarHandle(PollMark.class, "polls", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The consumers' polls, bumped with opaque reads and writes (a bump two consumers race on may be one). */
    @SuppressWarnings("unused") // through POLLS
    private long polls;
    /** The counter's value when a wait last began: equal to it, no consumer polled since. */
    private volatile long sleptAt;
    /** The counter's value the progress thread saw last (its own). */
    private long seen;
    /** The progress thread's clock when it saw the counter change (its own). */
    private long changedAt;

    /** A consumer polls the EVD: it reads the CQ itself. No clock, no fence. */
    void polled() {
        POLLS.setOpaque(this, (long) POLLS.getOpaque(this) + 1);
    }

    /** A consumer goes to sleep (a wait on the EVD or on a CNO): the progress thread reads the CQ again at once. */
    void consumerSleeps() {
        sleptAt = (long) POLLS.getOpaque(this);
    }

    /**
     * Whether a consumer polled since a wait last began (or at all, if none began): what the progress
     * thread's next look counts as a poll, clock aside.
     */
    boolean pollingSinceSleep() {
        long slept = sleptAt; // before the counter: a waiter's own polls are seen up to its sleep
        return (long) POLLS.getOpaque(this) != slept;
    }

    /**
     * Called by the progress thread only, with its clock: whether a consumer polled the EVD within
     * {@link #POLLING_NANOS} of {@code now}, as seen from this thread's looks at the counter (a change
     * since its last look counts as a poll now), and not before a wait that began since.
     */
    boolean polledRecently(long now) {
        long p = (long) POLLS.getOpaque(this);
        if (p != seen) {
            seen = p;
            changedAt = now;
        }
        return now - changedAt < POLLING_NANOS && pollingSinceSleep();
    }
}
