package org.jdapl.provider.ofi;

import org.jdapl.dat.ExtensionType;

import java.util.List;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.LmrTriplet;

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

    private final long epBits;
    final boolean request;
    private final int mask;
    private final long[] seqs;
    final long[] cookies;
    final DtoOperation[] ops;
    final long[] lengths;
    final boolean[] suppressed;
    /** The extended type of a DTO that completes as an extended one (RDMA Write with immediate data), else null. */
    final ExtensionType[] extended;
    private final boolean[] live;
    /** Receives posted before the EP has a libfabric endpoint, posted when it gets one. */
    final Object[] deferred;
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
        extended = new ExtensionType[size];
        live = new boolean[size];
        deferred = new Object[size];
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
    long add(long cookie, DtoOperation op, long length, boolean suppress, List<LmrTriplet> defer) {
        long seq = head++ & SEQ_MASK;
        int s = (int) (seq & mask);
        seqs[s] = seq;
        cookies[s] = cookie;
        ops[s] = op;
        lengths[s] = length;
        suppressed[s] = suppress;
        deferred[s] = defer;
        live[s] = true;
        outstanding++;
        return seq;
    }

    long context(long seq) {
        return epBits | seq;
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
        outstanding--;
        while (tail < head && !live[(int) (tail & mask)]) {
            tail++;
        }
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

    long seqOf(int s) {
        return seqs[s];
    }
}
