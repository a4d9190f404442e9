package org.jdapl.provider.ofi.fabric;

import java.io.Serial;

/**
 * A libfabric call that returned a negative {@code FI_E*} (errno) value. The DAT layer turns it into
 * a {@code DatException} in one place ({@code org.jdapl.provider.ofi.FiErrors}).
 */
public final class FiException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final int errno;

    /** A failure with the positive errno and what was called. */
    public FiException(int rc, String call) {
        super(call + ": " + describe(rc));
        this.errno = Math.abs(rc);
    }

    private static String describe(int rc) {
        int e = Math.abs(rc);
        try {
            return Fi.unavailableReasonQuiet() ? "errno " + e : Fi.get().strerror(e) + " (" + e + ")";
        } catch (RuntimeException ex) {
            return "errno " + e;
        }
    }

    /** The positive errno ({@code FI_E*}). */
    public int errno() {
        return errno;
    }

    /** Throws for a negative return code. */
    public static void check(long rc, String call) {
        if (rc < 0) {
            throw new FiException((int) rc, call);
        }
    }
}
