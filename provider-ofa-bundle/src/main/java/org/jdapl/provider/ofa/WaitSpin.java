package org.jdapl.provider.ofa;

/**
 * How long a wait into a caller's event slot ({@code OfaEvd.waitEvent(long, int, EventSlot)}) polls
 * the EVD's CQ before it blocks: {@code -Djdapl.ofa.waitSpinMicros} (default {@value #DEFAULT_MICROS}
 * us, 0 for none), read when an EVD is created. A completion that comes within the spin is taken in
 * the waiter's thread without an event object, a lock or a wake-up; one that comes later is waited
 * for as before (the CQ armed, the waiter parked, the IA's event thread queuing the event).
 */
final class WaitSpin {
    static final long DEFAULT_MICROS = 20;

    private WaitSpin() {
    }

    /** The spin, in nanoseconds, as the property says now. */
    static long nanos() {
        long micros = Long.getLong("jdapl.ofa.waitSpinMicros", DEFAULT_MICROS);
        return Math.max(0, Math.min(micros, 1_000_000)) * 1000;
    }
}
