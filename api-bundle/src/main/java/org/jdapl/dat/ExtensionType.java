package org.jdapl.dat;

/**
 * DAT_IB_EXT_TYPE: what an extended event of OFED's DAT extensions ({@code dat_ib_extensions.h})
 * reports, with its values. A {@link DatEvent.ExtendedDtoCompletion} carries one of the DTO kinds, a
 * {@link DatEvent.UdConnection} one of the {@code UD_*} connection kinds.
 *
 * @since 1.4
 */
public enum ExtensionType {
    /** DAT_IB_FETCH_AND_ADD: a {@link Endpoint#postFetchAndAdd} completed at its requester. */
    FETCH_AND_ADD,
    /** DAT_IB_CMP_AND_SWAP: a {@link Endpoint#postCompareAndSwap} completed at its requester. */
    CMP_AND_SWAP,
    /** DAT_IB_RDMA_WRITE_IMMED: a {@link Endpoint#postRdmaWriteWithImmediate} completed at its requester. */
    RDMA_WRITE_IMMED,
    /**
     * DAT_IB_RDMA_WRITE_IMMED_DATA: an RDMA Write with immediate data arrived at the data sink; it
     * consumed one posted receive (the completion's cookie) and carries the immediate data; the
     * length is the bytes the write placed in the sink's RMR.
     */
    RDMA_WRITE_IMMED_DATA,
    /** DAT_IB_RECV_IMMED_DATA: a message with immediate data arrived in a receive. */
    RECV_IMMED_DATA,
    /** DAT_IB_UD_CONNECT_REQUEST: a datagram endpoint asks for the address handle of a service point's. */
    UD_CONNECT_REQUEST,
    /** DAT_IB_UD_REMOTE_AH: the active side of a UD exchange got the remote address handle. */
    UD_REMOTE_AH,
    /** DAT_IB_UD_PASSIVE_REMOTE_AH: the passive side of a UD exchange got the remote address handle. */
    UD_PASSIVE_REMOTE_AH,
    /** DAT_IB_UD_SEND: a {@link DatagramEndpoint#postSendDatagram} completed at its sender. */
    UD_SEND,
    /** DAT_IB_UD_RECV: a datagram arrived in a receive; the event carries the sender's address handle. */
    UD_RECV,
    /** DAT_IB_UD_CONNECT_REJECT: the passive side rejected a UD exchange. */
    UD_CONNECT_REJECT,
    /** DAT_IB_UD_CONNECT_ERROR: a UD exchange failed (unreachable, timed out). */
    UD_CONNECT_ERROR;

    /** The DAT_IB_EXT_TYPE value. */
    public int value() {
        return ordinal();
    }

    /** The {@code dat_ib_extensions.h} name, e.g. {@code DAT_IB_FETCH_AND_ADD}. */
    public String datName() {
        return "DAT_IB_" + name();
    }
}
