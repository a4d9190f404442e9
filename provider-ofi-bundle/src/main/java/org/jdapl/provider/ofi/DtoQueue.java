package org.jdapl.provider.ofi;

import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.RmrTriplet;

/**
 * One work queue of an EP (receive or request): a ring with a slot per posted DTO, recording its
 * cookie, operation, length and whether its success is suppressed. The operation's libfabric
 * context is a number, not a pointer: the EP's id, the queue and the DTO's sequence number
 * ({@link #context}); a completion retires exactly the slot that still holds that sequence, so a
 * late completion of a DTO already flushed is dropped and every DTO completes exactly once. The
 * caller holds the EP's lock.
 */
final class DtoQueue {
    private static final int SEQ_BITS = 39;
    private static final long SEQ_MASK = (1L << SEQ_BITS) - 1;
    /** The bit below the queue bit, kept out of sequence numbers: {@link OfiExtensions#WRITE_HALF}. */
    static final long SPARE_BIT = 1L << (SEQ_BITS - 1);
    /** Sequence numbers wrap below {@link #SPARE_BIT}. */
    private static final long SEQ_WRAP = SPARE_BIT - 1;

    private final long epBits;
    final boolean request;
    private final int mask;
    private final long[] seqs;
    final long[] cookies;
    final DtoOperation[] ops;
    final long[] lengths;
    final boolean[] suppressed;
    /**
     * Posted unsignalled (no completion of its own: {@link EpPosts#selective}); a later completion
     * retires it ({@link #oldestSilentBefore}).
     */
    final boolean[] silent;
    /** The provider's own request (the drain of a graceful disconnect): it has no event, not even an error. */
    final boolean[] internal;
    /** Unsignalled requests posted since the last signalled one. */
    int silentRun;
    /** The extended type of a DTO that completes as an extended one (RDMA Write with immediate data), else null. */
    final ExtensionType[] extended;
    /** The immediate data of an RDMA Write with immediate data (posted, or waiting for a credit). */
    final int[] immediates;
    private final boolean[] live;
    /**
     * Receives posted before the EP has a libfabric endpoint, posted when it gets one; requests that
     * wait for a receive credit (their segments; their remote segment in {@link #remotes}).
     */
    final Object[] deferred;
    /** The remote segment of a request that waits for a credit. */
    final RmrTriplet[] remotes;
    private long head;
    private long tail;
    private int outstanding;

    DtoQueue(int epId, boolean request, int depth) {
        this.epBits = ((long) epId << 40) | (request ? 1L << SEQ_BITS : 0);
        this.request = request;
        int size = Integer.highestOneBit(Math.max(depth, 1) * 2 - 1);
        mask = size - 1;
        seqs = new long[size];
        cookies = new long[size];
        ops = new DtoOperation[size];
        lengths = new long[size];
        suppressed = new boolean[size];
        silent = new boolean[size];
        internal = new boolean[size];
        extended = new ExtensionType[size];
        immediates = new int[size];
        live = new boolean[size];
        deferred = new Object[size];
        remotes = new RmrTriplet[size];
    }

    static int epId(long context) {
        return (int) (context >>> 40);
    }

    static boolean isRequest(long context) {
        return (context & (1L << SEQ_BITS)) != 0;
    }

    static long seq(long context) {
        return context & SEQ_MASK;
    }

    int outstanding() {
        return outstanding;
    }

    boolean full(int limit) {
        return outstanding >= limit || live[(int) (head & mask)];
    }

    /** Records a DTO; returns its sequence number. */
    long add(long cookie, DtoOperation op, long length, boolean suppress, Object defer) {
        long seq = head++ & SEQ_WRAP;
        int s = (int) (seq & mask);
        seqs[s] = seq;
        cookies[s] = cookie;
        ops[s] = op;
        lengths[s] = length;
        suppressed[s] = suppress;
        silent[s] = false;
        internal[s] = false;
        extended[s] = null;
        deferred[s] = defer;
        live[s] = true;
        outstanding++;
        return seq;
    }

    long context(long seq) {
        return epBits | seq;
    }

    /** The slot of the oldest live DTO, or -1 if none is live. */
    int oldest() {
        int s = (int) (tail & mask);
        return tail < head && live[s] ? s : -1;
    }

    /** Takes back the DTO of {@code seq} that was never posted (the post failed). */
    void undo(long seq) {
        int s = (int) (seq & mask);
        live[s] = false;
        extended[s] = null;
        deferred[s] = null;
        outstanding--;
        head--;
    }

    /** The slot of a live DTO with this sequence number, or -1. */
    int slot(long seq) {
        int s = (int) (seq & mask);
        return live[s] && seqs[s] == seq ? s : -1;
    }

    /** Retires a slot. */
    void retire(int s) {
        live[s] = false;
        extended[s] = null;
        deferred[s] = null;
        remotes[s] = null;
        outstanding--;
        while (tail < head && !live[(int) (tail & mask)]) {
            tail++;
        }
    }

    /**
     * The slot of the oldest live unsignalled DTO posted before the one in slot {@code s}, or -1. On a
     * MSG endpoint requests complete in the order they were posted, so such a DTO has succeeded once
     * a later one completes (a failure is reported with its own completion, first).
     */
    int oldestSilentBefore(int s) {
        long stop = seqs[s];
        for (long q = tail; q < head; q++) {
            int t = (int) (q & mask);
            if (live[t] && seqs[t] == stop) {
                return -1;
            }
            if (live[t] && silent[t]) {
                return t;
            }
        }
        return -1;
    }

    /** Whether the newest live DTO is unsignalled. */
    boolean newestSilent() {
        int t = (int) ((head - 1) & mask);
        return head > tail && live[t] && silent[t];
    }

    /** The live slots, oldest first (for a flush), as slot numbers. */
    int[] liveSlots() {
        int[] out = new int[outstanding];
        int n = 0;
        for (long q = tail; q < head && n < out.length; q++) {
            int s = (int) (q & mask);
            if (live[s]) {
                out[n++] = s;
            }
        }
        return out;
    }

    /** The sequence number the next DTO gets. */
    long nextSeq() {
        return head & SEQ_WRAP;
    }

    /** The sequence number after {@code seq}. */
    static long next(long seq) {
        return (seq + 1) & SEQ_WRAP;
    }

    long seqOf(int s) {
        return seqs[s];
    }
}
