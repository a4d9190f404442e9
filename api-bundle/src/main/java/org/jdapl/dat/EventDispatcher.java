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
