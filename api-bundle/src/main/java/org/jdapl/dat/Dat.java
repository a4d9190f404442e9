package org.jdapl.dat;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/** The constants of {@code dat.h} that are not enum values. */
public final class Dat {
    /** The DAT API major version this package implements (DAT_VERSION_MAJOR). */
    public static final int VERSION_MAJOR = 2;
    /** The DAT API minor version this package implements (DAT_VERSION_MINOR). */
    public static final int VERSION_MINOR = 0;

    /**
     * DAT_TIMEOUT_INFINITE: wait without a time limit. Timeouts are microseconds, as DAT_TIMEOUT is;
     * any value at or above this one is infinite.
     */
    public static final long TIMEOUT_INFINITE = Long.MAX_VALUE;

    /** DAT_NAME_MAX_LENGTH: the longest IA name. */
    public static final int NAME_MAX_LENGTH = 256;

    /** DAT_WATERMARK_INFINITE: no watermark. */
    public static final int WATERMARK_INFINITE = -1;
    /** DAT_HW_DEFAULT: the default hard high watermark. */
    public static final int HW_DEFAULT = WATERMARK_INFINITE;
    /** DAT_SRQ_LW_DEFAULT: the default SRQ low watermark. */
    public static final int SRQ_LW_DEFAULT = 0;
    /**
     * DAT_SRQ_LOW_WATERMARK_EVENT, a DAT_SRQ_ASYNC_ERROR_REASON: the reason of an
     * {@link EventNumber#ASYNC_SRQ_LOW_WATERMARK} event.
     *
     * @since 1.2
     */
    public static final int SRQ_LOW_WATERMARK_EVENT = 2;
    /**
     * DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT, a DAT_EP_ASYNC_ERROR_REASON: the reason of an
     * {@link EventNumber#ASYNC_SRQ_SOFT_HIGH_WATERMARK} event.
     *
     * @since 1.2
     */
    public static final int SRQ_SOFT_HIGH_WATERMARK_EVENT = 2;
    /** DAT_VALUE_UNKNOWN. */
    public static final int VALUE_UNKNOWN = -2;

    /** DAT_EVD_DEFAULT_FLAG: every DAT event stream, no software events. */
    public static final Set<EvdFlag> EVD_DEFAULT_FLAGS = Collections.unmodifiableSet(
            EnumSet.of(EvdFlag.CR, EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.RMR_BIND, EvdFlag.ASYNC));
    /**
     * DAT_MEM_PRIV_ALL_FLAG: the four privileges of {@code dat.h} (0x33); the extension's
     * {@link MemPriv#REMOTE_ATOMIC} is asked for by name, as in C.
     */
    public static final Set<MemPriv> MEM_PRIV_ALL = Collections.unmodifiableSet(EnumSet.of(MemPriv.LOCAL_READ,
            MemPriv.REMOTE_READ, MemPriv.LOCAL_WRITE, MemPriv.REMOTE_WRITE));
    /** DAT_MEM_PRIV_NONE_FLAG. */
    public static final Set<MemPriv> MEM_PRIV_NONE = Collections.unmodifiableSet(EnumSet.noneOf(MemPriv.class));
    /** DAT_MEM_PRIV_READ_FLAG: local and remote read. */
    public static final Set<MemPriv> MEM_PRIV_READ = Collections.unmodifiableSet(
            EnumSet.of(MemPriv.LOCAL_READ, MemPriv.REMOTE_READ));
    /** DAT_MEM_PRIV_WRITE_FLAG: local and remote write. */
    public static final Set<MemPriv> MEM_PRIV_WRITE = Collections.unmodifiableSet(
            EnumSet.of(MemPriv.LOCAL_WRITE, MemPriv.REMOTE_WRITE));
    /** DAT_COMPLETION_DEFAULT_FLAG: completions are reported with notification. */
    public static final Set<CompletionFlag> COMPLETION_DEFAULT = Collections.unmodifiableSet(
            EnumSet.noneOf(CompletionFlag.class));
    /** DAT_CLOSE_DEFAULT. */
    public static final CloseFlag CLOSE_DEFAULT = CloseFlag.ABRUPT;

    private Dat() {
    }
}
