package org.jdapl.dat;

/**
 * DAT_RMR_TRIPLET: the remote side of an RDMA Read or Write, {@code length} bytes at
 * {@code targetAddress} of the region the peer exposed with {@code rmrContext}. The address is a
 * registered virtual address for {@link VaType#VA} regions and an offset for {@link VaType#ZB}.
 *
 * @param rmrContext the peer's RMR or LMR rmr_context
 * @param targetAddress the DAT_VADDR in the peer's region
 * @param length the number of bytes, 0 to {@link LmrTriplet#MAX_SEGMENT_LENGTH}
 */
public record RmrTriplet(int rmrContext, long targetAddress, long length) {
    /**
     * Checks the length.
     *
     * @throws DatException INVALID_PARAMETER for a negative length or one over 32 bits
     */
    public RmrTriplet {
        if (length < 0 || length > LmrTriplet.MAX_SEGMENT_LENGTH) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "remote length " + length + " out of range");
        }
    }
}
