package org.jdapl.dat;

/** DAT_COMPLETION_FLAGS: how a posted DTO or RMR bind reports its completion. An empty set is DAT_COMPLETION_DEFAULT_FLAG. */
public enum CompletionFlag implements DatFlag {
    /** DAT_COMPLETION_SUPPRESS_FLAG: a successful completion is not reported; an error is. */
    SUPPRESS(0x01),
    /** DAT_COMPLETION_SOLICITED_WAIT_FLAG: the send asks the peer's receive completion to notify waiters. */
    SOLICITED_WAIT(0x02),
    /** DAT_COMPLETION_UNSIGNALLED_FLAG: the completion is queued without waking waiters. */
    UNSIGNALLED(0x04),
    /** DAT_COMPLETION_BARRIER_FENCE_FLAG: processing starts only after all earlier RDMA Reads complete. */
    BARRIER_FENCE(0x08),
    /** DAT_COMPLETION_EVD_THRESHOLD_FLAG: receive completions wake waiters by the EVD wait threshold (EP attribute). */
    EVD_THRESHOLD(0x10);

    private final int value;

    CompletionFlag(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
