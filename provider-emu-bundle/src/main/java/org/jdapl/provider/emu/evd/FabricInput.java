package org.jdapl.provider.emu.evd;

import java.util.function.BooleanSupplier;

/**
 * What an EVD's waiters and pollers ({@link EventQueue}) need of the fabric its IA is on: a fabric with
 * input of its own (tcp) lets them read it, block in it briefly, and be woken out of it; the loopback
 * fabric has none, and every method does nothing. {@code org.jdapl.provider.emu.Fabric} extends it.
 */
public interface FabricInput {
    /** Whether threads waiting on EVDs may poll the fabric themselves ({@link #pollWhileWaiting}). */
    default boolean canPoll() {
        return false;
    }

    /**
     * Whether the fabric's input is large frames now (the last payload it received was): a consumer
     * polling an empty EVD then blocks in the input at once, as a waiter does, rather than reading it
     * without blocking ({@link #pollBriefly}).
     */
    default boolean largeInput() {
        return false;
    }

    /**
     * A waiter is about to poll: from now until its {@link #pollWhileWaiting} returns, an event for a
     * waiter makes the poll return ({@link #wakePoller}). Called with the EVD's queue lock held.
     */
    default void announcePoll() {
    }

    /**
     * Lets a thread waiting on an EVD poll the fabric itself for up to {@code maxNanos} (no lock held),
     * after {@link #announcePoll}.
     *
     * @return false if another thread polls; the caller then blocks until it is woken
     */
    default boolean pollWhileWaiting(long maxNanos) {
        return false;
    }

    /**
     * A consumer polls an empty EVD ({@code dat_evd_dequeue}): a fabric with input of its own reads
     * what has arrived now, without blocking, unless another thread is reading it (no lock held).
     */
    default void pollNow() {
    }

    /**
     * A consumer has polled an empty EVD ({@code dat_evd_dequeue}) for a while: a fabric with input of
     * its own blocks in its input for up to {@code maxNanos} (no lock held), returning as soon as input
     * arrives or {@link #wakePoller} is called, unless {@code done} is already true once the consumer
     * has announced itself (so that an event queued meanwhile is never slept through).
     */
    default void pollBriefly(long maxNanos, BooleanSupplier done) {
    }

    /** An EVD waiter may be polling: have it look at its queue again. */
    default void wakePoller() {
    }
}
