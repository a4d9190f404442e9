package org.jdapl.dat;

/**
 * DAT_EVENT_NUMBER: what an event reports, with the values of {@code dat.h}. The two watermark
 * events ({@link #ASYNC_SRQ_LOW_WATERMARK}, {@link #ASYNC_SRQ_SOFT_HIGH_WATERMARK}) have no number of
 * their own in DAT 2.0's {@code dat.h}, which names them only as reasons of
 * DAT_ASYNCH_ERROR_EVENT_DATA; they take the next values of the asynchronous range, and their
 * {@link DatEvent.AsyncError} carries the affiliated handle and {@code dat.h}'s reason.
 */
public enum EventNumber {
    /** DAT_DTO_COMPLETION_EVENT. */
    DTO_COMPLETION(0x00001),
    /** DAT_RMR_BIND_COMPLETION_EVENT. */
    RMR_BIND_COMPLETION(0x01001),
    /** DAT_CONNECTION_REQUEST_EVENT. */
    CONNECTION_REQUEST(0x02001),
    /** DAT_CONNECTION_EVENT_ESTABLISHED. */
    CONNECTION_ESTABLISHED(0x04001),
    /** DAT_CONNECTION_EVENT_PEER_REJECTED. */
    CONNECTION_PEER_REJECTED(0x04002),
    /** DAT_CONNECTION_EVENT_NON_PEER_REJECTED. */
    CONNECTION_NON_PEER_REJECTED(0x04003),
    /** DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR. */
    CONNECTION_ACCEPT_COMPLETION_ERROR(0x04004),
    /** DAT_CONNECTION_EVENT_DISCONNECTED. */
    CONNECTION_DISCONNECTED(0x04005),
    /** DAT_CONNECTION_EVENT_BROKEN. */
    CONNECTION_BROKEN(0x04006),
    /** DAT_CONNECTION_EVENT_TIMED_OUT. */
    CONNECTION_TIMED_OUT(0x04007),
    /** DAT_CONNECTION_EVENT_UNREACHABLE. */
    CONNECTION_UNREACHABLE(0x04008),
    /** DAT_ASYNC_ERROR_EVD_OVERFLOW. */
    ASYNC_ERROR_EVD_OVERFLOW(0x08001),
    /** DAT_ASYNC_ERROR_IA_CATASTROPHIC. */
    ASYNC_ERROR_IA_CATASTROPHIC(0x08002),
    /** DAT_ASYNC_ERROR_EP_BROKEN. */
    ASYNC_ERROR_EP_BROKEN(0x08003),
    /** DAT_ASYNC_ERROR_TIMED_OUT. */
    ASYNC_ERROR_TIMED_OUT(0x08004),
    /** DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR. */
    ASYNC_ERROR_PROVIDER_INTERNAL_ERROR(0x08005),
    /**
     * DAT_SRQ_LOW_WATERMARK_EVENT ({@code dat_srq_set_lw}): the buffers on an SRQ dropped below its low
     * watermark. The handle is the SRQ, the reason {@link Dat#SRQ_LOW_WATERMARK_EVENT}. Not in
     * {@code dat.h}'s DAT_EVENT_NUMBER (see the class comment).
     *
     * @since 1.2
     */
    ASYNC_SRQ_LOW_WATERMARK(0x08006),
    /**
     * DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT ({@code dat_ep_set_watermark}): the receive buffers an EP took
     * from its SRQ went over its soft high watermark. The handle is the EP, the reason
     * {@link Dat#SRQ_SOFT_HIGH_WATERMARK_EVENT}. Not in {@code dat.h}'s DAT_EVENT_NUMBER (see the
     * class comment).
     *
     * @since 1.2
     */
    ASYNC_SRQ_SOFT_HIGH_WATERMARK(0x08007),
    /** DAT_HA_DOWN_TO_1. */
    HA_DOWN_TO_1(0x08101),
    /** DAT_HA_UP_TO_MULTI_PATH. */
    HA_UP_TO_MULTI_PATH(0x08102),
    /** DAT_SOFTWARE_EVENT. */
    SOFTWARE(0x10001),
    /**
     * DAT_IB_DTO_EVENT (DAT_IB_EXTENSION_RANGE_BASE): a completion of one of OFED's extended DTOs,
     * {@link DatEvent.ExtendedDtoCompletion}.
     *
     * @since 1.4
     */
    IB_DTO(0x40000),
    /**
     * DAT_IB_UD_CONNECTION_REQUEST_EVENT: a datagram endpoint asks a service point for an address
     * handle exchange ({@link DatEvent.UdConnection} with the request to accept or reject).
     *
     * @since 1.4
     */
    IB_UD_CONNECTION_REQUEST(0x40001),
    /**
     * DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED: a UD exchange completed; the
     * {@link DatEvent.UdConnection} carries the remote address handle.
     *
     * @since 1.4
     */
    IB_UD_CONNECTION_ESTABLISHED(0x40002),
    /**
     * DAT_IB_UD_CONNECTION_REJECT_EVENT: the passive side rejected a UD exchange.
     *
     * @since 1.4
     */
    IB_UD_CONNECTION_REJECT(0x40003),
    /**
     * DAT_IB_UD_CONNECTION_ERROR_EVENT: a UD exchange failed (unreachable, timed out).
     *
     * @since 1.4
     */
    IB_UD_CONNECTION_ERROR(0x40004);

    private final int value;

    EventNumber(int value) {
        this.value = value;
    }

    /** The DAT_EVENT_NUMBER value. */
    public int value() {
        return value;
    }

    /** Whether this is one of the DAT_CONNECTION_EVENT_* numbers. */
    public boolean isConnectionEvent() {
        return (value & 0xff000) == 0x04000;
    }

    /** Whether this is one of the asynchronous error or HA numbers. */
    public boolean isAsyncEvent() {
        return (value & 0xff000) == 0x08000 || (value & 0xfff00) == 0x08100;
    }

    /**
     * Whether this is one of the numbers of OFED's DAT_IB_EXTENSION_RANGE ({@code dat_ib_extensions.h}).
     *
     * @since 1.4
     */
    public boolean isExtensionEvent() {
        return (value & 0xf0000) == 0x40000;
    }

    /** The {@code dat.h} name, e.g. {@code DAT_CONNECTION_EVENT_ESTABLISHED}. */
    public String datName() {
        return switch (this) {
            case DTO_COMPLETION -> "DAT_DTO_COMPLETION_EVENT";
            case RMR_BIND_COMPLETION -> "DAT_RMR_BIND_COMPLETION_EVENT";
            case CONNECTION_REQUEST -> "DAT_CONNECTION_REQUEST_EVENT";
            case SOFTWARE -> "DAT_SOFTWARE_EVENT";
            case HA_DOWN_TO_1, HA_UP_TO_MULTI_PATH -> "DAT_" + name();
            case ASYNC_SRQ_LOW_WATERMARK -> "DAT_SRQ_LOW_WATERMARK_EVENT";
            case ASYNC_SRQ_SOFT_HIGH_WATERMARK -> "DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT";
            case IB_DTO -> "DAT_IB_DTO_EVENT";
            case IB_UD_CONNECTION_REQUEST -> "DAT_IB_UD_CONNECTION_REQUEST_EVENT";
            case IB_UD_CONNECTION_ESTABLISHED -> "DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED";
            case IB_UD_CONNECTION_REJECT -> "DAT_IB_UD_CONNECTION_REJECT_EVENT";
            case IB_UD_CONNECTION_ERROR -> "DAT_IB_UD_CONNECTION_ERROR_EVENT";
            default -> isConnectionEvent()
                    ? "DAT_CONNECTION_EVENT_" + name().substring("CONNECTION_".length())
                    : "DAT_" + name();
        };
    }
}
