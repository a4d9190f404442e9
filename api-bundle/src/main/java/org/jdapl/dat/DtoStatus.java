package org.jdapl.dat;

/** DAT_DTO_COMPLETION_STATUS: how a DTO or RMR bind completed, with the values of {@code dat.h}. */
public enum DtoStatus {
    /** DAT_DTO_SUCCESS. */
    SUCCESS,
    /** DAT_DTO_ERR_FLUSHED: the DTO was flushed (disconnect, reset, free, broken connection). */
    FLUSHED,
    /** DAT_DTO_ERR_LOCAL_LENGTH: a local buffer was too small. */
    LOCAL_LENGTH,
    /** DAT_DTO_ERR_LOCAL_EP: a local endpoint error. */
    LOCAL_EP,
    /** DAT_DTO_ERR_LOCAL_PROTECTION: a local LMR was invalid, freed or lacked the privilege. */
    LOCAL_PROTECTION,
    /** DAT_DTO_ERR_BAD_RESPONSE: the peer answered unexpectedly. */
    BAD_RESPONSE,
    /** DAT_DTO_ERR_REMOTE_ACCESS: the remote RMR context, bounds or privileges refused the access. */
    REMOTE_ACCESS,
    /** DAT_DTO_ERR_REMOTE_RESPONDER: the remote side failed the operation. */
    REMOTE_RESPONDER,
    /** DAT_DTO_ERR_TRANSPORT: the transport failed (retries exhausted, connection broken). */
    TRANSPORT,
    /** DAT_DTO_ERR_RECEIVER_NOT_READY: no receive was posted at the peer within the retries. */
    RECEIVER_NOT_READY,
    /** DAT_DTO_ERR_PARTIAL_PACKET. */
    PARTIAL_PACKET,
    /** DAT_RMR_OPERATION_FAILED: an RMR bind failed. */
    RMR_OPERATION_FAILED,
    /** DAT_DTO_ERR_LOCAL_MM_ERROR (kDAPL). */
    LOCAL_MM_ERROR;

    /** The DAT_DTO_COMPLETION_STATUS value. */
    public int value() {
        return ordinal();
    }
}
