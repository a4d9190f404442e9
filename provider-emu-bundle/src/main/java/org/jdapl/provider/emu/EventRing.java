package org.jdapl.provider.emu;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdapl.dat.DatEvent;

/**
 * The events of one EVD in arrival order: a ring of slots, appended to by one producer at a time
 * and taken by consumers, neither taking a lock, so that a completion never takes a lock its
 * consumer takes (a loopback send completes into the peer's EVD while the peer spins on
 * {@code dat_evd_dequeue}). Consumers exclude each other by claiming their side with one
 * compare-and-set ({@code taking}), released by a plain store.
 *
 * <p>Producers exclude each other by claiming the producer side with one compare-and-set
 * ({@code producing}, on the producer's line): a completion is queued under the domain lock of the
 * EVD's IA, or, on the loopback fabric's common path, under the sending EP's {@link SendLock} only.
 * The producer's fields ({@code tail} and its cached views of the consumers' fields), the consumers'
 * ({@code head}, {@code cleared}) and the shared ones each sit on cache lines of their own, so that a
 * hand-off moves the slot's line and the event, and nothing else. An event is published by a release
 * store of its slot; a consumer sees an event by the slot being non-null (the only line it reads from
 * the producer on the fast path), takes it and advances {@code head}; taken slots are cleared a block
 * at a time. The producer reads the consumers' fields only when its cached views say the queue may
 * hold {@code qlen} events or fill the ring; a full ring grows (with the consumers' side claimed, so
 * that no consumer is taking meanwhile): events beyond {@code qlen} are queued, never dropped.
 *
 * <p>Behaviours: OBJ_04: no event is lost; the crossing of {@code qlen} is reported once, again
 * only after the queue went back to {@code qlen} events or fewer (or was resized).
 */
final class EventRing extends EventRingShared {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(DatEvent[].class);
    private static final VarHandle HEAD = RingSides.field(EventRingConsumer.class, "head", long.class);
    private static final VarHandle TAIL = RingSides.field(EventRingProducer.class, "tail", long.class);
    private static final VarHandle CLEARED = RingSides.field(EventRingConsumer.class, "cleared", long.class);
    private static final VarHandle TAKING = RingSides.field(EventRingConsumer.class, "taking", int.class);
    private static final VarHandle PRODUCING = RingSides.field(EventRingProducer.class, "producing", int.class);

    /** Slots cleared together by the consumer. */
    static final int BLOCK = RingSides.BLOCK;
    /** Slots of a new ring at most (it grows beyond when more events are queued). */
    static final int INITIAL_MAX = 1024;

    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6, q7;

    EventRing(int qlen) {
        this.qlen = qlen;
        this.slots = new DatEvent[Math.max(4 * BLOCK, Integer.highestOneBit(Math.min(qlen, INITIAL_MAX)) << 1)];
    }

    // ---------------------------------------------------------------- producers

    /**
     * Claims the producer side: producers exclude each other, and a waiter that claims it once after
     * counting itself ({@link #syncWithProducers}) orders itself against every producer.
     */
    void claimProducer() {
        RingSides.claim(PRODUCING, this);
    }

    void releaseProducer() {
        RingSides.release(PRODUCING, this);
    }

    /**
     * Claims and releases the producer side: a producer that appended before is seen by the caller's
     * next look at the ring, and one that appends after sees what the caller wrote before (the EVD's
     * waiter count). So a producer reads the waiter count under its claim and needs no fence of its own
     * after the event's publication.
     */
    void syncWithProducers() {
        claimProducer();
        releaseProducer();
    }

    /** {@link #append} under the producer claim. */
    boolean publish(DatEvent event) {
        claimProducer();
        try {
            return append(event);
        } finally {
            releaseProducer();
        }
    }

    /**
     * Appends {@code event} (producer side claimed); a full ring first grows (claiming the consumers'
     * side meanwhile). The event is published by release stores of its slot and {@code tail}.
     *
     * @return true if the queue just went over its length (OBJ_04), which the caller reports once
     */
    boolean append(DatEvent event) {
        long t = tail;
        DatEvent[] s = slots;
        if (t - clearedSeen >= s.length) {
            clearedSeen = (long) CLEARED.getVolatile(this);
            if (t - clearedSeen >= s.length) {
                s = grow(t);
            }
        }
        if (t - headSeen >= qlen) {
            headSeen = (long) HEAD.getVolatile(this);
        }
        long before = t - headSeen;
        boolean crossed = false;
        if (before <= qlen) {
            overflowed = false;
        }
        if (before + 1 > qlen && !overflowed) {
            overflowed = true;
            crossed = true;
        }
        SLOT.setRelease(s, (int) t & (s.length - 1), event);
        TAIL.setRelease(this, t + 1);
        return crossed;
    }

    private DatEvent[] grow(long t) {
        claim();
        try {
            long h = head;
            DatEvent[] old = slots;
            DatEvent[] larger = new DatEvent[old.length << 1];
            for (long i = h; i < t; i++) {
                larger[(int) i & (larger.length - 1)] = old[(int) i & (old.length - 1)];
            }
            slots = larger;
            CLEARED.setRelease(this, h);
            clearedSeen = h;
            headSeen = h;
            return larger;
        } finally {
            release();
        }
    }

    // ---------------------------------------------------------------- consumers

    /** Whether no event is queued now: one read of the head slot, no lock (a hint for a poller). */
    boolean isEmpty() {
        DatEvent[] s = slots;
        return SLOT.getAcquire(s, (int) head & (s.length - 1)) == null;
    }

    /**
     * Takes the oldest event, or null if none. Consumers (and a growing producer) claim their side by
     * one compare-and-set, released by a plain store: a dequeue costs no lock and no fence of its own.
     */
    DatEvent poll() {
        claim();
        try {
            return take();
        } finally {
            release();
        }
    }

    /** Claims the consumers' side, held for a few instructions (or a growth's copy) at a time. */
    private void claim() {
        RingSides.claim(TAKING, this);
    }

    private void release() {
        RingSides.release(TAKING, this);
    }

    /**
     * Takes the oldest event, or null if none (the consumers' side claimed). Taken slots are cleared a block of
     * {@link #BLOCK} at a time, once the block is done, so the producer's next stores into a block's
     * line do not first fetch it back from the consumer after every event.
     */
    private DatEvent take() {
        DatEvent[] s = slots;
        long h = head;
        int i = (int) h & (s.length - 1);
        DatEvent e = (DatEvent) SLOT.getAcquire(s, i);
        if (e != null) {
            long next = h + 1;
            long c = cleared;
            long nowCleared = RingSides.clearTaken(s, next, c);
            if (nowCleared != c) {
                CLEARED.setRelease(this, nowCleared);
            }
            HEAD.setRelease(this, next);
        }
        return e;
    }

    /** Events queued (a count of the moment, exact under the domain lock). */
    int size() {
        return (int) ((long) TAIL.getVolatile(this) - head);
    }

    /**
     * Whether a waiter with {@code threshold} is served: at least that many events, or any event
     * that is not a DTO completion (the threshold counts DTO completions only; a waiter asks, and then
     * polls, which may find the event taken by a dequeue that raced it).
     */
    boolean ready(int threshold) {
        int n = size();
        if (n == 0) {
            return false;
        }
        if (n >= threshold) {
            return true;
        }
        DatEvent[] s = slots;
        long h = head;
        for (long i = h; i < h + n; i++) {
            if (!(s[(int) i & (s.length - 1)] instanceof DatEvent.DtoCompletion)) {
                return true;
            }
        }
        return false;
    }

    int qlen() {
        return qlen;
    }

    /** A new length (domain lock and queue lock held; the caller checked that the events fit). */
    void resize(int minQlen) {
        claimProducer();
        try {
            qlen = minQlen;
            overflowed = false;
        } finally {
            releaseProducer();
        }
    }
}

// The layout of an EventRing: the producer's, the consumers' and the shared fields on lines of their own.

/** Keeps the producer's line apart from whatever precedes the object. */
abstract class EventRingPadBefore {
    @SuppressWarnings("unused")
    long p0, p1, p2, p3, p4, p5, p6, p7;
}

/** Written by the producer only (with the producer side claimed). */
abstract class EventRingProducer extends EventRingPadBefore {
    /** 1 while a producer has claimed its side. */
    int producing;
    /** The index the next event goes to; release stores, read by counting consumers. */
    long tail;
    /** The producer's last read of {@code head} (for the length, {@code qlen}). */
    long headSeen;
    /** The producer's last read of {@code cleared} (for the room in the ring). */
    long clearedSeen;
    /** Whether the crossing of {@code qlen} was reported and the queue has not gone back below. */
    boolean overflowed;
}

abstract class EventRingPadMiddle extends EventRingProducer {
    @SuppressWarnings("unused")
    long m0, m1, m2, m3, m4, m5, m6, m7;
}

/** Written by consumers only (with the consumers' side claimed through {@code taking}). */
abstract class EventRingConsumer extends EventRingPadMiddle {
    /** The index of the oldest event. */
    volatile long head;
    /** Every slot of an index below this one is cleared (a multiple of the block, or a growth's head). */
    volatile long cleared;
    /** 1 while a consumer (or a growing producer) has claimed the consumers' side. */
    int taking;
}

abstract class EventRingPadAfter extends EventRingConsumer {
    @SuppressWarnings("unused")
    long a0, a1, a2, a3, a4, a5, a6, a7;
}

/** Read by both sides, written rarely (growth; resize under both locks). */
abstract class EventRingShared extends EventRingPadAfter {
    volatile DatEvent[] slots;
    int qlen;
}
