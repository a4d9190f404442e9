package org.jdapl.provider.ofa;

import org.jdapl.dat.DtoStatus;

/** How a work completion's {@code ibv_wc_status} maps to a DAT_DTO_COMPLETION_STATUS. */
final class Completions {
    private Completions() {
    }

    /**
     * The DAT status of a failed request or receive, refined where rdma_rxe reports a generic local
     * error (IBV_WC_LOC_QP_OP_ERR) for what the IB spec calls a local protection error (an invalid
     * L_Key: the DTO named a freed LMR) or a local length error (a receive too small for the message).
     */
    static DtoStatus status(int wcStatus, boolean receive, boolean namedFreedLmr) {
        boolean localGeneric = wcStatus == 2 || wcStatus == 4 || wcStatus == 8 || wcStatus == 9;
        if (localGeneric && namedFreedLmr) {
            return DtoStatus.LOCAL_PROTECTION;
        }
        if (receive && (wcStatus == 2 || wcStatus == 9)) {
            return DtoStatus.LOCAL_LENGTH;
        }
        return status(wcStatus);
    }

    /** The DAT status of an {@code enum ibv_wc_status} value. */
    static DtoStatus status(int wcStatus) {
        return switch (wcStatus) {
            case 0 -> DtoStatus.SUCCESS;
            case 1 -> DtoStatus.LOCAL_LENGTH; // IBV_WC_LOC_LEN_ERR
            case 2, 3 -> DtoStatus.LOCAL_EP; // IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_EEC_OP_ERR
            case 4, 8 -> DtoStatus.LOCAL_PROTECTION; // IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_ACCESS_ERR
            case 5 -> DtoStatus.FLUSHED; // IBV_WC_WR_FLUSH_ERR
            case 6 -> DtoStatus.RMR_OPERATION_FAILED; // IBV_WC_MW_BIND_ERR
            case 7 -> DtoStatus.BAD_RESPONSE; // IBV_WC_BAD_RESP_ERR
            case 10 -> DtoStatus.REMOTE_ACCESS; // IBV_WC_REM_ACCESS_ERR
            case 9, 11 -> DtoStatus.REMOTE_RESPONDER; // IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_OP_ERR
            case 12 -> DtoStatus.TRANSPORT; // IBV_WC_RETRY_EXC_ERR
            case 13 -> DtoStatus.RECEIVER_NOT_READY; // IBV_WC_RNR_RETRY_EXC_ERR
            default -> DtoStatus.TRANSPORT;
        };
    }
}
