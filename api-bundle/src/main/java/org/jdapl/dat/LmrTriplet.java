package org.jdapl.dat;

/**
 * DAT_LMR_TRIPLET: one scatter/gather entry of a DTO, {@code length} bytes at {@code offset} in a
 * registered {@link LocalMemoryRegion}. In C the triplet holds the LMR context and a virtual
 * address; in Java it holds the LMR itself and an offset into its segment.
 *
 * @param lmr the region (its {@code lmr_context})
 * @param offset the offset in the region's segment, 0 or more
 * @param length the number of bytes, 0 or more (0 makes the other fields irrelevant, as in DAT)
 */
public record LmrTriplet(LocalMemoryRegion lmr, long offset, long length) {
    /** The largest length of one segment (DAT_SEG_LENGTH is 32 bits). */
    public static final long MAX_SEGMENT_LENGTH = 0xFFFF_FFFFL;

    /**
     * Checks the fields that do not depend on a provider.
     *
     * @throws DatException INVALID_PARAMETER for a null LMR with a non-zero length, a negative
     *         offset or length, or a length over {@link #MAX_SEGMENT_LENGTH}
     */
    public LmrTriplet {
        if (length < 0 || length > MAX_SEGMENT_LENGTH) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "segment length " + length + " out of range");
        }
        if (offset < 0) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "segment offset " + offset + " is negative");
        }
        if (lmr == null && length != 0) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "a segment of " + length + " bytes needs an LMR");
        }
    }

    /** The whole registered region as one segment. */
    public static LmrTriplet of(LocalMemoryRegion lmr) {
        return new LmrTriplet(lmr, 0, lmr.segment().byteSize());
    }
}
