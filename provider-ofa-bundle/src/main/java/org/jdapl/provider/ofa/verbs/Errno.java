package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/** The {@code errno} a downcall captured, one capture buffer per thread. */
public final class Errno {
    private static final StructLayout LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final ThreadLocal<MemorySegment> BUFFER =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(LAYOUT));

    /** EAGAIN. */
    public static final int EAGAIN = 11;
    /** ENOMEM. */
    public static final int ENOMEM = 12;
    /** EINVAL. */
    public static final int EINVAL = 22;
    /** EINTR. */
    public static final int EINTR = 4;
    /** ENODEV. */
    public static final int ENODEV = 19;
    /** EADDRINUSE. */
    public static final int EADDRINUSE = 98;
    /** ENOMEM is also what ibv_post_* return for a full queue. ENETUNREACH. */
    public static final int ENETUNREACH = 101;
    /** EHOSTUNREACH. */
    public static final int EHOSTUNREACH = 113;
    /** EADDRNOTAVAIL. */
    public static final int EADDRNOTAVAIL = 99;
    /** ETIMEDOUT. */
    public static final int ETIMEDOUT = 110;
    /** EOPNOTSUPP. */
    public static final int EOPNOTSUPP = 95;

    private Errno() {
    }

    /** This thread's capture buffer, to pass as the first argument of a downcall. */
    public static MemorySegment capture() {
        MemorySegment b = BUFFER.get();
        ERRNO.set(b, 0L, 0);
        return b;
    }

    /** The errno the last downcall of this thread captured. */
    public static int last() {
        return (int) ERRNO.get(BUFFER.get(), 0L);
    }
}
