package org.jdapl.dat;

import java.util.List;

/**
 * A pre-built, reusable local I/O vector: the DAT_LMR_TRIPLET array a C consumer builds once and
 * passes to {@code dat_ep_post_send}, {@code dat_ep_post_recv}, {@code dat_ep_post_rdma_write} and
 * {@code dat_ep_post_rdma_read} again and again. The triplets are checked and copied once, here; the
 * posts that take a {@code LocalIov} ({@link Endpoint#postSend(LocalIov, long, java.util.Set)} and
 * the others) neither copy nor re-check the list, and a provider may keep what it derives from it
 * (the segments, the total length) across posts. It is immutable, so a posted DTO may hold it while
 * the consumer posts it again.
 */
public final class LocalIov {
    private final List<LmrTriplet> triplets;
    private final long totalLength;

    private LocalIov(List<LmrTriplet> triplets) {
        this.triplets = triplets;
        long total = 0;
        for (LmrTriplet t : triplets) {
            total += t.length();
        }
        this.totalLength = total;
    }

    /**
     * A vector of {@code triplets}, in order.
     *
     * @throws NullPointerException for a null list or triplet
     */
    public static LocalIov of(List<LmrTriplet> triplets) {
        return new LocalIov(List.copyOf(triplets));
    }

    /**
     * A vector of {@code triplets}, in order.
     *
     * @throws NullPointerException for a null triplet
     */
    public static LocalIov of(LmrTriplet... triplets) {
        return new LocalIov(List.of(triplets));
    }

    /** A vector of one segment: the whole registered region. */
    public static LocalIov of(LocalMemoryRegion lmr) {
        return new LocalIov(List.of(LmrTriplet.of(lmr)));
    }

    /** The triplets, an unmodifiable list (the same instance every time). */
    public List<LmrTriplet> triplets() {
        return triplets;
    }

    /** The number of segments. */
    public int size() {
        return triplets.size();
    }

    /** The segment at {@code index}. */
    public LmrTriplet get(int index) {
        return triplets.get(index);
    }

    /** The sum of the segments' lengths. */
    public long totalLength() {
        return totalLength;
    }

    @Override
    public String toString() {
        return "LocalIov" + triplets;
    }
}
