package org.jdapl.provider.ofa;

import org.jdapl.dat.DtoOperation;

/**
 * The work requests of one queue of a queue pair, in posting order: what each was (cookie,
 * operation, length, flags) so that its completion can be reported, and which are still
 * outstanding. A work request's {@code wr_id} carries the queue's tag, the queue pair's generation
 * and the sequence number, so that a completion names its entry without any lookup structure and a
 * stale completion (of a destroyed queue pair) is recognised. Completions of one queue arrive in
 * order (RC), and a signalled completion also retires every unsignalled request posted before it.
 * An entry is two longs, its cookie and the rest packed ({@link #meta}), so that a post writes two
 * array slots and a completion reads two; the subject (an RMR) has an array of its own, touched only
 * while a bind is outstanding. Guarded by the EP's lock.
 */
final class WorkRing {
    /** Tag of send queue work requests. */
    static final long SEND = 1L << 60;
    /** Tag of receive queue work requests. */
    static final long RECV = 2L << 60;
    /** Tag of shared receive queue work requests. */
    static final long SRQ = 3L << 60;
    static final long TAG_MASK = 0xfL << 60;
    private static final int GEN_SHIFT = 40;
    private static final long GEN_MASK = 0xfffffL;
    private static final long SEQ_MASK = (1L << GEN_SHIFT) - 1;

    /** What an entry is, beyond its DTO operation. */
    static final byte KIND_DTO = 0;
    static final byte KIND_BIND = 1;
    /** A DTO whose segments named a freed LMR (its completion is a protection error). */
    static final byte KIND_DTO_FREED_LMR = 2;
    /**
     * The provider's own signalled request after unsignalled ones, which a graceful disconnect waits
     * for: its completion retires them and reports nothing itself.
     *
     * <p>Behaviours: DISC_04.
     */
    static final byte KIND_DRAIN = 3;
    /**
     * One of OFED's extended requests (an atomic, an RDMA Write with immediate data): its subject is
     * its {@link org.jdapl.dat.ExtensionType}, its completion a {@code DatEvent.ExtendedDtoCompletion}.
     */
    static final byte KIND_EXT = 4;

    private static final DtoOperation[] OPS = DtoOperation.values();
    private static final int OP_BITS = 8;
    private static final int KIND_SHIFT = OP_BITS;
    /** Report success (not set for SUPPRESS and for requests signalled only to bound the queue). */
    private static final long REPORT = 1L << 16;
    private static final int LENGTH_SHIFT = 17;

    final long tag;
    final int capacity;
    /** The arrays' length (a power of two, at least {@link #capacity}) less one: an index is a mask away. */
    private final int mask;
    private final long[] cookies;
    /** Per entry: length (above {@link #LENGTH_SHIFT}), {@link #REPORT}, kind, operation ordinal. */
    private final long[] meta;
    private final Object[] subjects;
    /** Entries with a subject not yet retired. */
    private int subjectsOut;
    private long head;
    private long tail;
    private int generation;
    /** Unsignalled requests posted since the last signalled one. */
    int unsignalledRun;

    WorkRing(long tag, int capacity) {
        this.tag = tag;
        this.capacity = capacity;
        int size = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        mask = size - 1;
        cookies = new long[size];
        meta = new long[size];
        subjects = new Object[size];
    }

    /** Starts over for a new queue pair: nothing outstanding, a new generation. */
    void reset(int newGeneration) {
        head = 0;
        tail = 0;
        unsignalledRun = 0;
        generation = newGeneration;
        java.util.Arrays.fill(subjects, null);
        subjectsOut = 0;
    }

    int outstanding() {
        return (int) (head - tail);
    }

    boolean full() {
        return head - tail >= capacity;
    }

    /** The wr_id the next entry will have. */
    long nextWrId() {
        return tag | ((generation & GEN_MASK) << GEN_SHIFT) | (head & SEQ_MASK);
    }

    /** Records the entry the next wr_id names (after the post succeeded). */
    void add(long cookie, DtoOperation op, long length, byte kind, boolean reportSuccess, Object subject) {
        int i = index(head);
        cookies[i] = cookie;
        meta[i] = length << LENGTH_SHIFT | (reportSuccess ? REPORT : 0) | (long) kind << KIND_SHIFT | op.ordinal();
        if (subject != null) {
            subjects[i] = subject;
            subjectsOut++;
        }
        head++;
    }

    /**
     * The sequence number a wr_id names if it belongs to this ring's current generation and is
     * outstanding, else -1.
     */
    long sequenceOf(long wrId) {
        if ((wrId & TAG_MASK) != tag || ((wrId >>> GEN_SHIFT) & GEN_MASK) != (generation & GEN_MASK)) {
            return -1;
        }
        long low = wrId & SEQ_MASK;
        // Rebuild the full sequence number near the tail.
        long seq = (tail & ~SEQ_MASK) | low;
        if (seq < tail) {
            seq += SEQ_MASK + 1;
        }
        return seq < head ? seq : -1;
    }

    private int index(long seq) {
        return (int) seq & mask;
    }

    long tail() {
        return tail;
    }

    long cookieAt(long seq) {
        return cookies[index(seq)];
    }

    /**
     * An entry's packed description, which {@link #opOf}, {@link #lengthOf}, {@link #kindOf} and
     * {@link #reportsSuccess} read.
     */
    long metaAt(long seq) {
        return meta[index(seq)];
    }

    static DtoOperation opOf(long meta) {
        return OPS[(int) meta & ((1 << OP_BITS) - 1)];
    }

    static long lengthOf(long meta) {
        return meta >>> LENGTH_SHIFT;
    }

    static byte kindOf(long meta) {
        return (byte) (meta >>> KIND_SHIFT);
    }

    static boolean reportsSuccess(long meta) {
        return (meta & REPORT) != 0;
    }

    DtoOperation opAt(long seq) {
        return opOf(metaAt(seq));
    }

    long lengthAt(long seq) {
        return lengthOf(metaAt(seq));
    }

    byte kindAt(long seq) {
        return kindOf(metaAt(seq));
    }

    boolean reportAt(long seq) {
        return reportsSuccess(metaAt(seq));
    }

    Object subjectAt(long seq) {
        return subjects[index(seq)];
    }

    /** Retires every entry up to and including {@code seq}. */
    void retireThrough(long seq) {
        for (long s = tail; s <= seq && subjectsOut > 0; s++) {
            int i = index(s);
            if (subjects[i] != null) {
                subjects[i] = null;
                subjectsOut--;
            }
        }
        tail = seq + 1;
    }

    /** The generation of a wr_id. */
    static int generationOf(long wrId) {
        return (int) ((wrId >>> GEN_SHIFT) & GEN_MASK);
    }
}
