package org.jdapl.provider.ofa.verbs;

import java.io.Serial;

/** A libibverbs, librdmacm or libc call failed: the function and its errno. */
public final class VerbsException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;

    /** A failure of {@code function} with {@code errno}. */
    public VerbsException(String function, int errno) {
        super(function + " failed: " + describe(errno));
        this.function = function;
        this.errno = errno;
    }

    /** The C function that failed. */
    public String function() {
        return function;
    }

    /** Its errno (0 if it set none). */
    public int errno() {
        return errno;
    }

    static String describe(int errno) {
        String name = switch (errno) {
            case 0 -> "no errno";
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 4 -> "EINTR";
            case 9 -> "EBADF";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case 16 -> "EBUSY";
            case 19 -> "ENODEV";
            case 22 -> "EINVAL";
            case 24 -> "EMFILE";
            case 38 -> "ENOSYS";
            case 95 -> "EOPNOTSUPP";
            case 98 -> "EADDRINUSE";
            case 99 -> "EADDRNOTAVAIL";
            case 101 -> "ENETUNREACH";
            case 110 -> "ETIMEDOUT";
            case 111 -> "ECONNREFUSED";
            case 113 -> "EHOSTUNREACH";
            default -> "errno";
        };
        return name + " (" + errno + ")";
    }
}
