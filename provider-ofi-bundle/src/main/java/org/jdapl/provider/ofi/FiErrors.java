package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.provider.ofi.fabric.FiException;

/**
 * The one place where libfabric's errors ({@code FI_E*}, errno values, with {@code fi_strerror}'s
 * text) become DAT returns and DTO statuses.
 */
final class FiErrors {
    private FiErrors() {
    }

    /** The DatException for a failed libfabric call. */
    static DatException toDat(FiException e) {
        return new DatException(type(e.errno()), subtype(e.errno()), e.getMessage(), e);
    }

    /** The DatException for a negative return code of a call. */
    static DatException toDat(long rc, String call) {
        return toDat(new FiException((int) rc, call));
    }

    private static DatReturnType type(int errno) {
        return switch (errno) {
            case 12, 11, 28, 24, 23 -> DatReturnType.INSUFFICIENT_RESOURCES; // ENOMEM, EAGAIN, ENOSPC, EMFILE, ENFILE
            case 98 -> DatReturnType.CONN_QUAL_IN_USE; // EADDRINUSE
            case 22, 90, 7 -> DatReturnType.INVALID_PARAMETER; // EINVAL, EMSGSIZE, E2BIG
            case 38, 95 -> DatReturnType.MODEL_NOT_SUPPORTED; // ENOSYS, EOPNOTSUPP
            case 99, 101, 113, 97 -> DatReturnType.INVALID_ADDRESS; // EADDRNOTAVAIL, ENETUNREACH, EHOSTUNREACH, EAFNOSUPPORT
            case 13, 1 -> DatReturnType.PRIVILEGES_VIOLATION; // EACCES, EPERM
            case 19, 61 -> DatReturnType.PROVIDER_NOT_FOUND; // ENODEV, ENODATA
            case 107, 104, 32 -> DatReturnType.INVALID_STATE; // ENOTCONN, ECONNRESET, EPIPE
            default -> DatReturnType.INTERNAL_ERROR;
        };
    }

    private static DatReturnSubtype subtype(int errno) {
        return switch (errno) {
            case 12 -> DatReturnSubtype.RESOURCE_MEMORY;
            case 11 -> DatReturnSubtype.RESOURCE_TEP;
            default -> DatReturnSubtype.NO_SUBTYPE;
        };
    }

    /**
     * The base of the error codes that stand for a work completion's status on libfabric's verbs
     * provider: above every errno and {@code FI_E*} value.
     */
    static final int VERBS_WC = 0x10000;

    /**
     * The error of a completion on libfabric's verbs provider: {@code vrb_cq_readerr} (1.17,
     * {@code prov/verbs/src/verbs_cq.c}) sets {@code err} to {@code FI_ECANCELED} for a flushed work
     * request and to {@code EIO} for every other failure, with the work completion's
     * {@code ibv_wc_status} in {@code prov_errno}; that status says what failed (a remote access error,
     * a receive too small), so an {@code EIO} with a status becomes {@link #VERBS_WC} + the status.
     *
     * <p>Behaviours: LMR_05, LMR_06, OBJ_07.
     */
    static int verbsError(int err, int provErrno) {
        return err == 5 && provErrno > 0 && provErrno < 64 ? VERBS_WC + provErrno : err;
    }

    /**
     * The DTO status of a failed receive or request: as {@link #dtoStatus(int)}, except that a receive
     * that rdma_rxe fails with a generic local error ({@code IBV_WC_LOC_QP_OP_ERR},
     * {@code IBV_WC_REM_INV_REQ_ERR}) failed for a message larger than it, as the OFA provider reads it.
     */
    static DtoStatus dtoStatus(int errno, boolean receive) {
        if (receive && (errno == VERBS_WC + 2 || errno == VERBS_WC + 9)) {
            return DtoStatus.LOCAL_LENGTH;
        }
        return dtoStatus(errno);
    }

    /** The DTO status of a completion error ({@code fi_cq_err_entry.err}, or {@link #verbsError}'s code). */
    static DtoStatus dtoStatus(int errno) {
        if (errno > VERBS_WC && errno < VERBS_WC + 64) {
            return wcStatus(errno - VERBS_WC);
        }
        return switch (errno) {
            case 125 -> DtoStatus.FLUSHED; // ECANCELED
            case 90, 7, 75 -> DtoStatus.LOCAL_LENGTH; // EMSGSIZE, E2BIG, EOVERFLOW (FI_ETRUNC is 265)
            case 265 -> DtoStatus.LOCAL_LENGTH; // FI_ETRUNC
            case 13, 1, 14 -> DtoStatus.REMOTE_ACCESS; // EACCES, EPERM, EFAULT
            case 266 -> DtoStatus.REMOTE_ACCESS; // FI_ENOKEY
            case 269 -> DtoStatus.RECEIVER_NOT_READY; // FI_ENORX
            case 110, 104, 32, 107, 103 -> DtoStatus.TRANSPORT; // ETIMEDOUT, ECONNRESET, EPIPE, ENOTCONN, ECONNABORTED
            case 22 -> DtoStatus.REMOTE_RESPONDER;
            default -> DtoStatus.TRANSPORT;
        };
    }

    /** The DTO status of an {@code enum ibv_wc_status} value (as the OFA provider maps it). */
    private static DtoStatus wcStatus(int wcStatus) {
        return switch (wcStatus) {
            case 1 -> DtoStatus.LOCAL_LENGTH; // IBV_WC_LOC_LEN_ERR
            case 2, 3 -> DtoStatus.LOCAL_EP; // IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_EEC_OP_ERR
            case 4, 8 -> DtoStatus.LOCAL_PROTECTION; // IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_ACCESS_ERR
            case 5 -> DtoStatus.FLUSHED; // IBV_WC_WR_FLUSH_ERR
            case 7 -> DtoStatus.BAD_RESPONSE; // IBV_WC_BAD_RESP_ERR
            case 10 -> DtoStatus.REMOTE_ACCESS; // IBV_WC_REM_ACCESS_ERR
            case 9, 11 -> DtoStatus.REMOTE_RESPONDER; // IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_OP_ERR
            case 13 -> DtoStatus.RECEIVER_NOT_READY; // IBV_WC_RNR_RETRY_EXC_ERR
            default -> DtoStatus.TRANSPORT; // IBV_WC_RETRY_EXC_ERR and the rest
        };
    }
}
