package org.jdapl.provider.emu;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdapl.dat.DatEvent;

/**
 * The events of one EVD in arrival order: a ring of slots, appended to by one producer at a time
 * and taken by consumers, neither taking a lock, so that a completion never takes a lock its
 * consumer takes (a loopback send completes into the peer's EVD while the peer spins on
 * {@code dat_evd_dequeue}).
 *
 * <p>Each slot holds an event and the index + 1 that publishes it ({@link Slots}). The producer
 * writes the event, then the index by a release store; a consumer takes the event of index
 * {@code head} when its slot names that index, by one compare-and-set of {@code head}: consumers
 * exclude each other with that one instruction, and a consumer that loses it (another took the
 * event) looks again. A slot is reused for index {@code i + length} only once {@code head} passed
 * {@code i}, that is once its event was taken; a consumer that read a slot and then finds
 * {@code head} moved discards what it read. So a dequeue costs one compare-and-set, and the only
 * lines a hand-off moves are the slot's and the event's.
 *
 * <p>Producers exclude each other by claiming the producer side with one compare-and-set
 * ({@code producing}, on the producer's line): a completion is queued under the domain lock of the
 * EVD's IA, or, on the loopback fabric's common path, under the sending EP's {@link SendLock} only.
 * The producer's fields ({@code tail} and its cached view of {@code head}), the consumers'
 * ({@code head}) and the shared ones each sit on cache lines of their own. The producer reads
 * {@code head} only when its cached view says the queue may hold {@code qlen} events, fill the ring,
 * or let it forget a taken event: it clears the slot half a ring behind its tail once that slot's
 * event was taken, so the ring keeps at most half a ring of taken events reachable. A full ring grows:
 * the producer copies the queued events into slots twice as many and publishes them whole; a
 * consumer still reading the old slots finds the next index unpublished there and looks again.
 * Events beyond {@code qlen} are queued, never dropped.
 *
 * <p>Behaviours: OBJ_04: no event is lost; the crossing of {@code qlen} is reported once, again
 * only after the queue went back to {@code qlen} events or fewer (or was resized).
 */
final class EventRing extends EventRingShared {
    private static final VarHandle PUBLISHED = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle HEAD = RingSides.field(EventRingConsumer.class, "head", long.class);
    private static final VarHandle TAIL = RingSides.field(EventRingProducer.class, "tail", long.class);
    private static final VarHandle PRODUCING = RingSides.field(EventRingProducer.class, "producing", int.class);

    /** Slots of a new ring at least. */
    static final int MIN_SLOTS = 64;
    /** Slots of a new ring at most (it grows beyond when more events are queued). */
    static final int INITIAL_MAX = 1024;

    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6, q7;

    EventRing(int qlen) {
        this.qlen = qlen;
        this.slots = new Slots(Math.max(MIN_SLOTS, Integer.highestOneBit(Math.min(qlen, INITIAL_MAX)) << 1));
    }

    /** The ring's storage, replaced whole when it grows: per slot an event and the index + 1 it holds. */
    static final class Slots {
        final DatEvent[] events;
        /** The index + 1 of the event in each slot, 0 before the first (release stores, after the event). */
        final long[] published;
        final int mask;

        Slots(int n) {
            events = new DatEvent[n];
            published = new long[n];
            mask = n - 1;
        }

        int length() {
            return mask + 1;
        }

        /** Whether the slot of {@code index} holds that index's event (an acquire read). */
        boolean holds(long index) {
            return (long) PUBLISHED.getAcquire(published, (int) index & mask) == index + 1;
        }

        DatEvent event(long index) {
            return events[(int) index & mask];
        }
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
     * Appends {@code event} (producer side claimed); a full ring first grows. The event is published
     * by a release store of its index into its slot, after the event.
     *
     * @return true if the queue just went over its length (OBJ_04), which the caller reports once
     */
    boolean append(DatEvent event) {
        long t = tail;
        Slots s = slots;
        if (t - headSeen >= s.length()) {
            headSeen = (long) HEAD.getVolatile(this);
            if (t - headSeen >= s.length()) {
                s = grow(t);
            }
        }
        boolean crossed = crosses(t);
        int i = (int) t & s.mask;
        s.events[i] = event;
        PUBLISHED.setRelease(s.published, i, t + 1);
        TAIL.setRelease(this, t + 1);
        forgetTaken(s, t - (s.length() >> 1));
        return crossed;
    }

    /** Whether the event of index {@code t} takes the queue over its length, not reported yet (OBJ_04). */
    private boolean crosses(long t) {
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
        return crossed;
    }

    /**
     * Clears the slot of index {@code old} if its event was taken, so that the ring does not keep it
     * reachable (producer side claimed; after the publication, so that the store never delays it). A
     * consumer that still reads that slot for {@code old} finds {@code head} past it and discards it.
     */
    private void forgetTaken(Slots s, long old) {
        if (old < 0) {
            return;
        }
        if (old >= headSeen) {
            headSeen = (long) HEAD.getVolatile(this);
        }
        if (old < headSeen) {
            s.events[(int) old & s.mask] = null;
        }
    }

    /** Twice the slots, the queued events copied (from {@code head}, which consumers may move meanwhile). */
    private Slots grow(long t) {
        Slots old = slots;
        Slots larger = new Slots(old.length() << 1);
        long h = (long) HEAD.getVolatile(this);
        for (long i = h; i < t; i++) {
            int to = (int) i & larger.mask;
            larger.events[to] = old.event(i);
            larger.published[to] = i + 1;
        }
        slots = larger;
        headSeen = h;
        return larger;
    }

    // ---------------------------------------------------------------- consumers

    /** Whether no event is queued now: one read of the head's slot, no lock (a hint for a poller). */
    boolean isEmpty() {
        while (true) {
            Slots s = slots;
            long h = head;
            if (s.holds(h)) {
                return false;
            }
            if (s == slots && h == head) {
                return true;
            }
        }
    }

    /**
     * Takes the oldest event, or null if none: the head's slot is read, and {@code head} moved past it
     * by one compare-and-set, which a consumer racing for the same event loses (it looks again).
     */
    DatEvent poll() {
        while (true) {
            Slots s = slots;
            long h = head;
            if (!s.holds(h)) {
                if (s == slots && h == head) {
                    return null;
                }
                continue;
            }
            DatEvent e = s.event(h);
            if (HEAD.compareAndSet(this, h, h + 1)) {
                return e;
            }
        }
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
        Slots s = slots;
        long h = head;
        for (long i = h; i < h + n; i++) {
            if (s.holds(i) && !(s.event(i) instanceof DatEvent.DtoCompletion)) {
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
    /** The producer's last read of {@code head}. */
    long headSeen;
    /** Whether the crossing of {@code qlen} was reported and the queue has not gone back below. */
    boolean overflowed;
}

abstract class EventRingPadMiddle extends EventRingProducer {
    @SuppressWarnings("unused")
    long m0, m1, m2, m3, m4, m5, m6, m7;
}

/** Written by consumers only, by compare-and-set. */
abstract class EventRingConsumer extends EventRingPadMiddle {
    /** The index of the oldest event. */
    volatile long head;
}

abstract class EventRingPadAfter extends EventRingConsumer {
    @SuppressWarnings("unused")
    long a0, a1, a2, a3, a4, a5, a6, a7;
}

/** Read by both sides, written rarely (growth; resize under both locks). */
abstract class EventRingShared extends EventRingPadAfter {
    volatile EventRing.Slots slots;
    int qlen;
}
