package org.jdapl.dat;

/**
 * DAT_EVD_COUNTERS: what an EVD counts ({@link EventDispatcher#queryCounters}), in the order and with
 * the names of OFED's {@code dat_ib_extensions.h}: {@code WAIT} every {@code dat_evd_wait},
 * {@code WAIT_BLOCKED} those that had to block, {@code WAIT_NOTIFY} waiters woken, {@code DEQUEUE}
 * every {@code dat_evd_dequeue} with {@code DEQUEUE_FOUND} / {@code DEQUEUE_NOT_FOUND} its outcome,
 * {@code DEQUEUE_POLL*} batch dequeues, {@code CONN_CALLBACK} / {@code DTO_CALLBACK} connection and
 * DTO events the provider queued.
 *
 * @since 1.4
 */
public enum EvdCounter {
    WAIT, WAIT_BLOCKED, WAIT_NOTIFY, DEQUEUE, DEQUEUE_FOUND, DEQUEUE_NOT_FOUND, DEQUEUE_POLL, DEQUEUE_POLL_FOUND,
    CONN_CALLBACK, DTO_CALLBACK;

    /** The OFED name, e.g. {@code DCNT_EVD_WAIT}. */
    public String datName() {
        return "DCNT_EVD_" + name();
    }
}
