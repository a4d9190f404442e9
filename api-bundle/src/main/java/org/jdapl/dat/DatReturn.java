package org.jdapl.dat;

/**
 * The numeric DAT_RETURN encoding of DAT 2.0 and {@code dat_strerror}.
 *
 * <p>A DAT_RETURN is a 32-bit value: the class in bits 31-30 (error {@code 0x80000000}, warning
 * {@code 0x40000000}, success 0), the {@link DatReturnType} in bits 29-16 and the
 * {@link DatReturnSubtype} in bits 15-0. For example INVALID_HANDLE with subtype
 * INVALID_HANDLE_EP is {@code 0x8005000c}.
 */
public final class DatReturn {
    /** DAT_CLASS_ERROR: the error class bit. */
    public static final int CLASS_ERROR = 0x80000000;
    /** DAT_CLASS_WARNING: the warning class bit. */
    public static final int CLASS_WARNING = 0x40000000;
    /** DAT_CLASS_SUCCESS: the success class. */
    public static final int CLASS_SUCCESS = 0;
    /** DAT_TYPE_MASK: the bits of the return type. */
    public static final int TYPE_MASK = 0x3fff0000;
    /** DAT_SUBTYPE_MASK: the bits of the return subtype. */
    public static final int SUBTYPE_MASK = 0x0000ffff;
    /** DAT_SUCCESS. */
    public static final int SUCCESS = 0;

    private DatReturn() {
    }

    /**
     * The DAT_ERROR(type, subtype) macro: the numeric code of an error, with the error class bit
     * set unless the type is SUCCESS.
     */
    public static int code(DatReturnType type, DatReturnSubtype subtype) {
        if (type == DatReturnType.SUCCESS) {
            return subtype.value();
        }
        return CLASS_ERROR | (type.value() << 16) | subtype.value();
    }

    /** DAT_IS_WARNING: whether the warning class bit is set. */
    public static boolean isWarning(int code) {
        return (code & CLASS_WARNING) != 0;
    }

    /** Whether the code is an error (the error class bit is set). */
    public static boolean isError(int code) {
        return (code & CLASS_ERROR) != 0;
    }

    /**
     * {@code dat_strerror}: the major and minor message of a DAT_RETURN, as uDAPL prints them
     * (e.g. {@code DAT_PROVIDER_NOT_FOUND} and {@code DAT_NAME_NOT_REGISTERED}).
     *
     * @throws DatException INVALID_PARAMETER if the code holds an unknown type or subtype
     */
    public static Message strerror(int code) {
        return new Message(DatReturnType.ofCode(code).datName(), DatReturnSubtype.ofCode(code).datName());
    }

    /**
     * The two strings {@code dat_strerror} returns.
     *
     * @param major the type's name, e.g. {@code DAT_INVALID_HANDLE}
     * @param minor the subtype's name, e.g. {@code DAT_INVALID_HANDLE_EP}
     */
    public record Message(String major, String minor) {
        /** The form uDAPL consumers log: {@code [DAT_PROVIDER_NOT_FOUND:DAT_NAME_NOT_REGISTERED]}. */
        @Override
        public String toString() {
            return "[" + major + ":" + minor + "]";
        }
    }
}
