package org.jdapl.dat;

/**
 * DAT_SRQ_ATTR.
 *
 * @param maxRecvDtos the most receives the SRQ holds, 1 or more
 * @param maxRecvIov the most segments of a receive, 1 or more
 * @param lowWatermark the low watermark, 0 ({@link Dat#SRQ_LW_DEFAULT}) for none
 */
public record SrqAttributes(int maxRecvDtos, int maxRecvIov, int lowWatermark) {
    /**
     * Checks the values.
     *
     * @throws DatException INVALID_PARAMETER for a value out of range
     */
    public SrqAttributes {
        if (maxRecvDtos < 1 || maxRecvIov < 1 || lowWatermark < 0 || lowWatermark > maxRecvDtos) {
            throw new DatException(DatReturnType.INVALID_PARAMETER, "SRQ attribute out of range: " + this);
        }
    }
}
