package org.jdapl.provider.emu.evd;

import java.util.concurrent.TimeUnit;

/**
 * How long a consumer polling an empty EVD with {@code dat_evd_dequeue}, on a fabric with input of
 * its own (tcp), reads that input without blocking before its dequeues block in it briefly, as a
 * waiter's would (see {@link FabricInput#pollBriefly}). A polling episode runs from the first empty
 * dequeue to the dequeue that takes an event.
 *
 * <p>The spin is {@link #MIN_NANOS}, or one and a half times the recent episodes (a moving average)
 * if that is longer, up to {@link #MAX_NANOS}. It grows with the time answers take, so that an
 * answer a little slower than the fixed spin (a 64 B round trip on a loaded machine) is still read
 * at once rather than after a wake-up. While large frames come there is no spin at all ({@link
 * Fabric#largeInput}): reading beside the writer slows its write. It never shrinks below the fixed
 * spin (a spin that learnt to block at once made two consumers answering each other block for good
 * with free CPUs), and an episode longer than the maximum (a consumer waiting for input that is not
 * coming) sets it back to the fixed spin, so that such a consumer sleeps in the sockets. Consumers of
 * one EVD race on it harmlessly (a plain field: the worst is a spin of a stale length).
 */
final class PollSpin {
    /**
     * The fixed spin (system property {@code jdapl.emu.tcp.pollSpinMicros}, default 10 µs): an answer
     * that comes within it is read at once; past it, on a loaded machine, the kernel's wake-up gets
     * the consumer the CPU.
     */
    static final long MIN_NANOS = TimeUnit.MICROSECONDS.toNanos(
            Math.max(0, Long.getLong("jdapl.emu.tcp.pollSpinMicros", 10L)));
    /** The longest spin, and the longest episode the spin follows. */
    static final long MAX_NANOS = TimeUnit.MICROSECONDS.toNanos(500);

    /** The moving average of the recent episodes (0 after one over {@link #MAX_NANOS}). */
    private long episodeNanos;

    /** How long the current episode reads the input without blocking. */
    long spinNanos() {
        return Math.max(MIN_NANOS, Math.min(MAX_NANOS, episodeNanos + episodeNanos / 2));
    }

    /** An episode of {@code nanos} ended with an event. */
    void episodeEnded(long nanos) {
        episodeNanos = nanos > MAX_NANOS ? 0 : episodeNanos + (nanos - episodeNanos) / 4;
    }
}
