package org.jdapl.dat;

import java.util.Optional;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_EVD_HANDLE: an Event Dispatcher, the queue where completions, connection events,
 * connection requests, asynchronous errors and software events arrive. Waiting blocks the thread
 * (it never spins) and is safe with several waiting threads; an overflow is reported, never silent.
 */
@ProviderType
public interface EventDispatcher extends DatHandle {
    /**
     * {@code dat_evd_query}.
     *
     * @throws DatException INVALID_HANDLE
     */
    EvdParam query();

    /**
     * {@code dat_evd_free}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE (INVALID_STATE_EVD_IN_USE) while an EP,
     *         service point or IA uses it, or (INVALID_STATE_EVD_WAITER) while a thread waits
     */
    void free();

    /**
     * {@code dat_evd_resize}: changes the queue length; queued events stay.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER for a length under 1 or over the IA's
     *         maximum; INVALID_STATE if more events are queued than the new length holds
     */
    void resize(int minQlen);

    /**
     * {@code dat_evd_post_se}: queues a software event carrying {@code pointer}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER if the EVD was not created with
     *         {@link EvdFlag#SOFTWARE}; QUEUE_FULL if the queue is full
     */
    void postSoftwareEvent(Object pointer);

    /**
     * {@code dat_evd_dequeue}: takes the first queued event without waiting; empty where DAT
     * returns DAT_QUEUE_EMPTY.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE (INVALID_STATE_EVD_WAITER) while a thread waits
     */
    Optional<DatEvent> dequeue();

    /**
     * {@code dat_evd_wait}: blocks until at least {@code threshold} events are queued (or one, for
     * non-DTO events) and takes the first. The number still queued is {@link #count()}.
     *
     * @param timeoutMicros microseconds to wait, 0 to poll, {@link Dat#TIMEOUT_INFINITE}
     * @param threshold how many events to wait for, 1 or more
     * @throws DatException TIMEOUT_EXPIRED if nothing came in time; INTERRUPTED_CALL if the thread is
     *         interrupted; INVALID_PARAMETER for a negative timeout or a threshold under 1 or over the
     *         queue length; INVALID_STATE (INVALID_STATE_EVD_UNWAITABLE) if the EVD is unwaitable or
     *         becomes so while waiting; ABORT if the IA is closed while the thread waits; INVALID_HANDLE
     */
    DatEvent waitEvent(long timeoutMicros, int threshold);

    /** {@code dat_evd_wait} with a threshold of 1. */
    default DatEvent waitEvent(long timeoutMicros) {
        return waitEvent(timeoutMicros, 1);
    }

    /**
     * {@code dat_evd_dequeue} into a caller-owned event, as C fills the DAT_EVENT it is given: takes
     * the first queued event without waiting and writes it into {@code slot}, which the caller
     * allocates once and reuses. A provider fills a DTO completion field by field, so that a
     * dequeue allocates nothing; this default takes {@link #dequeue()}'s event and copies it.
     *
     * @return true if an event was taken, false where DAT returns DAT_QUEUE_EMPTY ({@code slot} is
     *         then left as it was)
     * @throws DatException as {@link #dequeue()}; INVALID_PARAMETER for a null slot
     */
    default boolean dequeue(EventSlot slot) {
        requireSlot(slot, 2);
        java.util.Optional<DatEvent> e = dequeue();
        if (e.isEmpty()) {
            return false;
        }
        slot.set(e.get());
        return true;
    }

    /**
     * {@code dat_evd_dequeue} repeated, in the batch form of {@code ibv_poll_cq} and
     * {@code fi_cq_read}: takes up to {@code max} queued events without waiting, in order, into
     * {@code slots[0]}, {@code slots[1]}, and so on.
     *
     * @return how many events were taken, 0 if the queue was empty
     * @throws DatException as {@link #dequeue()}; INVALID_PARAMETER for a null array or slot, or a
     *         {@code max} under 1 or over the array's length
     */
    default int dequeue(EventSlot[] slots, int max) {
        if (slots == null || max < 1 || max > slots.length) {
            throw DatException.invalidParameter(2, "dat_evd_dequeue: " + max + " events into "
                    + (slots == null ? "no array" : slots.length + " slots"));
        }
        int n = 0;
        while (n < max && dequeue(slots[n])) {
            n++;
        }
        return n;
    }

    /**
     * {@code dat_evd_wait} into a caller-owned event: blocks as {@link #waitEvent(long, int)} does and
     * writes the event taken into {@code slot}. A provider fills a DTO completion field by field, so
     * that a wait that finds its event allocates nothing; this default copies
     * {@link #waitEvent(long, int)}'s event.
     *
     * @throws DatException as {@link #waitEvent(long, int)}; INVALID_PARAMETER for a null slot
     */
    default void waitEvent(long timeoutMicros, int threshold, EventSlot slot) {
        requireSlot(slot, 4);
        slot.set(waitEvent(timeoutMicros, threshold));
    }

    /**
     * Fails INVALID_PARAMETER for a null slot, the C function's argument {@code argument}.
     *
     * @throws DatException INVALID_PARAMETER
     */
    private static void requireSlot(EventSlot slot, int argument) {
        if (slot == null) {
            throw DatException.invalidParameter(argument, "no event slot to fill");
        }
    }

    /**
     * How many events are queued now (the {@code nmore} output of {@code dat_evd_wait}).
     *
     * @throws DatException INVALID_HANDLE
     */
    int count();

    /**
     * {@code dat_evd_enable}: the EVD delivers notifications again.
     *
     * @throws DatException INVALID_HANDLE
     */
    void enable();

    /**
     * {@code dat_evd_disable}: events are still queued but nobody is notified (waiters and CNO).
     *
     * @throws DatException INVALID_HANDLE
     */
    void disable();

    /**
     * {@code dat_evd_set_unwaitable}: waiters return INVALID_STATE and new waits fail.
     *
     * @throws DatException INVALID_HANDLE
     */
    void setUnwaitable();

    /**
     * {@code dat_evd_clear_unwaitable}: the EVD can be waited on again.
     *
     * @throws DatException INVALID_HANDLE
     */
    void clearUnwaitable();

    /**
     * {@code dat_evd_modify_cno}: attaches the EVD to another CNO, or detaches it (null).
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_CNO for a freed CNO)
     */
    void modifyCno(Cno cno);

    /**
     * {@code dat_query_counters} with DCNT_EVD_ALL_COUNTERS: this EVD's counters, then zeroed if
     * {@code reset}. Offered where {@link ProviderAttributes#offers}
     * {@link ProviderAttributes#DAT_COUNTERS}.
     *
     * @throws DatException INVALID_HANDLE; MODEL_NOT_SUPPORTED where the provider does not count
     * @since 1.4
     */
    default Counters<EvdCounter> queryCounters(boolean reset) {
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_query_counters: not offered by this provider");
    }

    /**
     * DAT_EVD_PARAM.
     *
     * @param ia the IA the EVD belongs to
     * @param qlen the queue length
     * @param enabled whether notification is enabled
     * @param waitable whether the EVD may be waited on
     * @param cno the attached CNO, or null
     * @param flags the event streams it accepts
     */
    record EvdParam(InterfaceAdapter ia, int qlen, boolean enabled, boolean waitable, Cno cno, Set<EvdFlag> flags) {
        /** Copies the flags. */
        public EvdParam {
            flags = Set.copyOf(flags);
        }
    }
}
