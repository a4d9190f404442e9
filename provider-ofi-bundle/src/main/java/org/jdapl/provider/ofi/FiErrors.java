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

    /** The DTO status of a completion error ({@code fi_cq_err_entry.err}). */
    static DtoStatus dtoStatus(int errno) {
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
}
