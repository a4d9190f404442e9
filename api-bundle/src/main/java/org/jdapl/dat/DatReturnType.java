package org.jdapl.dat;

/**
 * The DAT_RETURN_TYPE of a DAT 2.0 return code: bits 29-16 of the numeric value, as in uDAPL's
 * {@code dat_error.h}.
 */
public enum DatReturnType {
    /** DAT_SUCCESS: the operation was successful. */
    SUCCESS(0x0000, "DAT_SUCCESS"),
    /** DAT_ABORT: the operation was aborted because the IA was closed or the EVD destroyed. */
    ABORT(0x0001, "DAT_ABORT"),
    /** DAT_CONN_QUAL_IN_USE: the connection qualifier is in use. */
    CONN_QUAL_IN_USE(0x0002, "DAT_CONN_QUAL_IN_USE"),
    /** DAT_INSUFFICIENT_RESOURCES: the operation failed for lack of resources. */
    INSUFFICIENT_RESOURCES(0x0003, "DAT_INSUFFICIENT_RESOURCES"),
    /** DAT_INTERNAL_ERROR: the provider detected an internal error. */
    INTERNAL_ERROR(0x0004, "DAT_INTERNAL_ERROR"),
    /** DAT_INVALID_HANDLE: a handle was invalid (freed, foreign or of the wrong type). */
    INVALID_HANDLE(0x0005, "DAT_INVALID_HANDLE"),
    /** DAT_INVALID_PARAMETER: a parameter was invalid. */
    INVALID_PARAMETER(0x0006, "DAT_INVALID_PARAMETER"),
    /** DAT_INVALID_STATE: an object was in a state that does not allow the operation. */
    INVALID_STATE(0x0007, "DAT_INVALID_STATE"),
    /** DAT_LENGTH_ERROR: a length was invalid or a buffer too small. */
    LENGTH_ERROR(0x0008, "DAT_LENGTH_ERROR"),
    /** DAT_MODEL_NOT_SUPPORTED: the requested model (QoS, flags) is not supported. */
    MODEL_NOT_SUPPORTED(0x0009, "DAT_MODEL_NOT_SUPPORTED"),
    /** DAT_PROVIDER_NOT_FOUND: the IA name is not registered. */
    PROVIDER_NOT_FOUND(0x000A, "DAT_PROVIDER_NOT_FOUND"),
    /** DAT_PRIVILEGES_VIOLATION: the memory privileges do not allow the access. */
    PRIVILEGES_VIOLATION(0x000B, "DAT_PRIVILEGES_VIOLATION"),
    /** DAT_PROTECTION_VIOLATION: a protection zone mismatch or an invalid LMR. */
    PROTECTION_VIOLATION(0x000C, "DAT_PROTECTION_VIOLATION"),
    /** DAT_QUEUE_EMPTY: nothing was queued. */
    QUEUE_EMPTY(0x000D, "DAT_QUEUE_EMPTY"),
    /** DAT_QUEUE_FULL: the event dispatcher queue is full. */
    QUEUE_FULL(0x000E, "DAT_QUEUE_FULL"),
    /** DAT_TIMEOUT_EXPIRED: the operation timed out. */
    TIMEOUT_EXPIRED(0x000F, "DAT_TIMEOUT_EXPIRED"),
    /** DAT_PROVIDER_ALREADY_REGISTERED: the provider name is already registered. */
    PROVIDER_ALREADY_REGISTERED(0x0010, "DAT_PROVIDER_ALREADY_REGISTERED"),
    /** DAT_PROVIDER_IN_USE: the provider is in use and cannot be removed. */
    PROVIDER_IN_USE(0x0011, "DAT_PROVIDER_IN_USE"),
    /** DAT_INVALID_ADDRESS: the remote address is not valid or not reachable. */
    INVALID_ADDRESS(0x0012, "DAT_INVALID_ADDRESS"),
    /** DAT_INTERRUPTED_CALL: a wait was interrupted. */
    INTERRUPTED_CALL(0x0013, "DAT_INTERRUPTED_CALL"),
    /** DAT_CONN_QUAL_UNAVAILABLE: no connection qualifier is available. */
    CONN_QUAL_UNAVAILABLE(0x0014, "DAT_CONN_QUAL_UNAVAILABLE"),
    /** DAT_RESERVED_LMR: reserved for kDAPL. */
    RESERVED_LMR(0x0015, "DAT_RESERVED_LMR"),
    /** DAT_PORT_IN_USE: the IP port is in use. */
    PORT_IN_USE(0x0016, "DAT_PORT_IN_USE"),
    /** DAT_COMM_NOT_SUPPORTED: the communicator is not supported. */
    COMM_NOT_SUPPORTED(0x0017, "DAT_COMM_NOT_SUPPORTED"),
    /** DAT_NOT_IMPLEMENTED: the provider does not support the operation. */
    NOT_IMPLEMENTED(0x3FFF, "DAT_NOT_IMPLEMENTED");

    private final int value;
    private final String datName;

    DatReturnType(int value, String datName) {
        this.value = value;
        this.datName = datName;
    }

    /** The type's value as it stands in bits 29-16 of a DAT_RETURN (for example 0x0005 for INVALID_HANDLE). */
    public int value() {
        return value;
    }

    /** The name uDAPL's {@code dat_strerror} prints, e.g. {@code DAT_INVALID_HANDLE}. */
    public String datName() {
        return datName;
    }

    /**
     * The type a numeric DAT_RETURN carries.
     *
     * @throws DatException INVALID_PARAMETER if the type bits name no known type
     */
    public static DatReturnType ofCode(int code) {
        int type = (code & DatReturn.TYPE_MASK) >>> 16;
        for (DatReturnType t : values()) {
            if (t.value == type) {
                return t;
            }
        }
        throw new DatException(INVALID_PARAMETER, DatReturnSubtype.INVALID_ARG1,
                "unknown DAT_RETURN type in 0x" + Integer.toHexString(code));
    }
}
