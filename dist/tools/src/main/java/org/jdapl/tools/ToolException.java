package org.jdapl.tools;

import java.io.Serial;

/**
 * The failure of a tool command, with the exit status the application returns for it:
 * {@link #USAGE} for bad arguments, {@link #FAILURE} for a failed test or an error of the DAT
 * API (an unknown IA name, a DTO that completed in error).
 */
public class ToolException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The exit status of a run that failed. */
    public static final int FAILURE = 1;
    /** The exit status of a command line that could not be understood. */
    public static final int USAGE = 2;

    private final int status;

    /** A failure with the given exit status and a message saying what went wrong. */
    public ToolException(int status, String message) {
        this(status, message, null);
    }

    /** A failure caused by another throwable. */
    public ToolException(int status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** A bad command line. */
    public static ToolException usage(String message) {
        return new ToolException(USAGE, message);
    }

    /** A failed run. */
    public static ToolException failure(String message) {
        return new ToolException(FAILURE, message);
    }

    /** The exit status, 1 or more. */
    public int status() {
        return status;
    }

    /** The message alone: the shell prints it as the error. */
    @Override
    public String toString() {
        return getMessage();
    }
}
