package org.jdapl.dat;

import java.io.Serial;

/**
 * The failure of a DAT operation: a DAT_RETURN with its {@link DatReturnType type},
 * {@link DatReturnSubtype subtype} and numeric {@link #code() code}. Every DAT function that
 * returns an error in C throws this exception in Java; it is unchecked.
 */
public class DatException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final DatReturnType type;
    private final DatReturnSubtype subtype;

    /** An error of the given type and subtype, with a message saying what failed. */
    public DatException(DatReturnType type, DatReturnSubtype subtype, String message) {
        this(type, subtype, message, null);
    }

    /** An error with no subtype. */
    public DatException(DatReturnType type, String message) {
        this(type, DatReturnSubtype.NO_SUBTYPE, message, null);
    }

    /** An error of the given type and subtype caused by another throwable. */
    public DatException(DatReturnType type, DatReturnSubtype subtype, String message, Throwable cause) {
        super(message, cause);
        if (type == null || type == DatReturnType.SUCCESS) {
            throw new IllegalArgumentException("a DatException needs an error type, not " + type);
        }
        this.type = type;
        this.subtype = subtype == null ? DatReturnSubtype.NO_SUBTYPE : subtype;
    }

    /** The DAT_RETURN_TYPE. */
    public DatReturnType type() {
        return type;
    }

    /** The DAT_RETURN_SUBTYPE ({@link DatReturnSubtype#NO_SUBTYPE} if there is none). */
    public DatReturnSubtype subtype() {
        return subtype;
    }

    /** The numeric DAT_RETURN, e.g. {@code 0x8005000c}. */
    public int code() {
        return DatReturn.code(type, subtype);
    }

    /** {@code dat_strerror} of this error. */
    public DatReturn.Message strerror() {
        return new DatReturn.Message(type.datName(), subtype.datName());
    }

    @Override
    public String getMessage() {
        String detail = super.getMessage();
        String head = strerror() + String.format(" (0x%08x)", code());
        return detail == null || detail.isEmpty() ? head : head + ": " + detail;
    }

    /** An INVALID_HANDLE error with the subtype naming the kind of handle. */
    public static DatException invalidHandle(DatReturnSubtype subtype, String message) {
        return new DatException(DatReturnType.INVALID_HANDLE, subtype, message);
    }

    /** An INVALID_PARAMETER error naming the argument (1-based) that is wrong. */
    public static DatException invalidParameter(int argument, String message) {
        DatReturnSubtype subtype = argument >= 1 && argument <= 10
                ? DatReturnSubtype.valueOf("INVALID_ARG" + argument)
                : DatReturnSubtype.NO_SUBTYPE;
        return new DatException(DatReturnType.INVALID_PARAMETER, subtype, message);
    }

    /** An INVALID_STATE error with the given subtype. */
    public static DatException invalidState(DatReturnSubtype subtype, String message) {
        return new DatException(DatReturnType.INVALID_STATE, subtype, message);
    }
}
