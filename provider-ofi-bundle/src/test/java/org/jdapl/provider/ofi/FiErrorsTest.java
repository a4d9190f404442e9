package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jdapl.dat.DtoStatus;
import org.junit.jupiter.api.Test;

/**
 * The DTO statuses of completion errors: libfabric's verbs provider reports every failure but a
 * flush as {@code EIO} with the work completion's status in {@code prov_errno}; the status decides.
 */
class FiErrorsTest {
    private static final int EIO = 5;

    @Test
    void lmr05RemoteAccessErrorOfVerbsIsRemoteAccess() {
        assertEquals(DtoStatus.REMOTE_ACCESS, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 10)));
    }

    @Test
    void obj07ReceiveTooSmallOnVerbsIsLocalLength() {
        assertEquals(DtoStatus.LOCAL_LENGTH, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 1)));
    }

    @Test
    void obj07RxeGenericLocalErrorOfAReceiveIsLocalLength() {
        assertEquals(DtoStatus.LOCAL_LENGTH, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 2), true));
        assertEquals(DtoStatus.LOCAL_EP, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 2), false));
    }

    @Test
    void verbsStatusesAsTheOfaProviderMapsThem() {
        assertEquals(DtoStatus.LOCAL_PROTECTION, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 4)));
        assertEquals(DtoStatus.REMOTE_RESPONDER, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 11)));
        assertEquals(DtoStatus.RECEIVER_NOT_READY, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 13)));
        assertEquals(DtoStatus.TRANSPORT, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 12)));
    }

    @Test
    void aFlushAndAnErrorWithoutStatusKeepTheirErrno() {
        assertEquals(DtoStatus.FLUSHED, FiErrors.dtoStatus(FiErrors.verbsError(125, 5)));
        assertEquals(DtoStatus.TRANSPORT, FiErrors.dtoStatus(FiErrors.verbsError(EIO, 0)));
    }
}
