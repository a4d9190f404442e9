package org.jdapl.dat;

/** DAT_MEM_PRIV_FLAGS: the access an LMR or RMR grants. An empty set is DAT_MEM_PRIV_NONE_FLAG. */
public enum MemPriv implements DatFlag {
    /** DAT_MEM_PRIV_LOCAL_READ_FLAG: local DTOs may read the memory (send, RDMA Write source). */
    LOCAL_READ(0x01),
    /** DAT_MEM_PRIV_REMOTE_READ_FLAG: remote peers may RDMA Read the memory. */
    REMOTE_READ(0x02),
    /** DAT_MEM_PRIV_LOCAL_WRITE_FLAG: local DTOs may write the memory (receive, RDMA Read sink). */
    LOCAL_WRITE(0x10),
    /** DAT_MEM_PRIV_REMOTE_WRITE_FLAG: remote peers may RDMA Write the memory. */
    REMOTE_WRITE(0x20),
    /**
     * DAT_IB_MEM_PRIV_REMOTE_ATOMIC (DAT_MEM_PRIV_EXTENSION_BASE): remote peers may apply
     * {@link Endpoint#postFetchAndAdd} and {@link Endpoint#postCompareAndSwap} to the memory.
     *
     * @since 1.4
     */
    REMOTE_ATOMIC(0x40);

    private final int value;

    MemPriv(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
