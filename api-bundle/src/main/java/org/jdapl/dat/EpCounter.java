package org.jdapl.dat;

/**
 * DAT_EP_COUNTERS: what an endpoint counts ({@link Endpoint#queryCounters}), in the order and with
 * the names of OFED's {@code dat_ib_extensions.h}. A {@code POST_*} counter counts posts accepted, its
 * {@code _DATA} companion their bytes; {@code RECV*} count receives completed successfully and the
 * bytes they took ({@code RECV_RDMA_IMM}: RDMA Writes with immediate data that consumed a receive).
 *
 * @since 1.4
 */
public enum EpCounter {
    CONNECT, DISCONNECT, POST_SEND, POST_SEND_DATA, POST_SEND_UD, POST_SEND_UD_DATA, POST_RECV, POST_RECV_DATA,
    POST_WRITE, POST_WRITE_DATA, POST_WRITE_IMM, POST_WRITE_IMM_DATA, POST_READ, POST_READ_DATA,
    POST_CMP_SWAP, POST_FETCH_ADD, RECV, RECV_DATA, RECV_UD, RECV_UD_DATA, RECV_IMM, RECV_IMM_DATA,
    RECV_RDMA_IMM, RECV_RDMA_IMM_DATA;

    /** The OFED name, e.g. {@code DCNT_EP_POST_SEND}. */
    public String datName() {
        return "DCNT_EP_" + name();
    }
}
