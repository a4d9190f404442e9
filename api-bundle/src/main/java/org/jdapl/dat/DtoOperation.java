package org.jdapl.dat;

/** DAT_DTOS: the kind of data transfer operation a completion reports. */
public enum DtoOperation {
    /** DAT_DTO_SEND. */
    SEND,
    /** DAT_DTO_RDMA_WRITE. */
    RDMA_WRITE,
    /** DAT_DTO_RDMA_READ. */
    RDMA_READ,
    /** DAT_DTO_RECEIVE. */
    RECEIVE,
    /** DAT_DTO_RECEIVE_WITH_INVALIDATE. */
    RECEIVE_WITH_INVALIDATE,
    /** DAT_DTO_BIND_MW: an RMR bind reported as a DTO. */
    BIND_MW;

    /** The DAT_DTOS value. */
    public int value() {
        return ordinal();
    }
}
