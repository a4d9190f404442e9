package org.jdapl.provider.emu.evd;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventSlot;

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
 * <p>A DTO completion, the event of the data path, is kept as values beside its slot ({@link
 * #appendDto}: cookie, length, status, operation, RMR context, with its EP in the event's place), and
 * the consumer that takes it makes its event: it reads lines whose addresses it knows from the
 * index, all at once, where an event object the producer allocated is a miss that waits for the
 * slot's. In the loopback ping-pong that took a round trip from 0.48 to 0.53 us down to 0.43 to 0.45
 * (the two threads' lines a short way apart) and from 1.41 to 1.47 down to 1.17 to 1.18 (far apart).
 *
 * <p>Producers exclude each other by claiming the producer side with one compare-and-set
 * ({@code producing}, on the producer's line): a completion is queued under the domain lock of the
 * EVD's IA, or, on the loopback fabric's common path, under the sending EP's {@link org.jdapl.provider.emu.SendLock} only.
 * The producer's fields ({@code tail} and its cached view of {@code head}), the consumers'
 * ({@code head}) and the shared ones each sit on cache lines of their own. The producer reads
 * {@code head} only when its cached view says the queue may hold {@code qlen} events or fill the ring.
 *
 * <p>A taken event leaves the ring at once: the consumer that took it clears its slot ({@link #vacate}),
 * so a dequeued completion keeps neither its event nor its EP reachable (a freed EP is not kept by the
 * EVDs its events went to). The slot's published word says who owns it: {@code i + 1} while it holds
 * index {@code i}, {@link #CLEARING} while the one that claimed the clearing (by a compare-and-set of
 * that word) empties it, {@code -(i + 1)} once it is empty. The producer reuses a slot only once it is
 * empty, and clears a taken one itself if its consumer has not yet begun, so no clearing ever lands on
 * a newer event. A full ring grows:
 * the producer copies the queued events into slots twice as many and publishes them whole; a
 * consumer still reading the old slots finds the next index unpublished there and looks again.
 * Events beyond {@code qlen} are queued, never dropped.
 *
 * <p>Behaviours: OBJ_04: no event is lost; the crossing of {@code qlen} is reported once, again
 * only after the queue went back to {@code qlen} events or fewer (or was resized).
 */
public final class EventRing extends EventRingShared {
    private static final VarHandle PUBLISHED = MethodHandles.arrayElementVarHandle(long[].class);
    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();
    private static final VarHandle HEAD = RingSides.field(LOOKUP, EventRingConsumer.class, "head", long.class);
    private static final VarHandle TAIL = RingSides.field(LOOKUP, EventRingProducer.class, "tail", long.class);
    private static final VarHandle PRODUCING = RingSides.field(LOOKUP, EventRingProducer.class, "producing", int.class);

    /** Slots of a new ring at least. */
    static final int MIN_SLOTS = 64;
    /** Slots of a new ring at most (it grows beyond when more events are queued). */
    static final int INITIAL_MAX = 1024;

    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6, q7;

    /** A ring of {@code evd}'s events: the EVD its DTO completions name ({@link #appendDto}). */
    EventRing(int qlen, EventDispatcher evd) {
        this.qlen = qlen;
        this.evd = evd;
        this.slots = new Slots(Math.max(MIN_SLOTS, Integer.highestOneBit(Math.min(qlen, INITIAL_MAX)) << 1));
    }

    /**
     * The ring's storage, replaced whole when it grows: per slot an event and the index + 1 it holds.
     * A DTO completion is kept as its EP in the event's place and its values in {@code words}
     * ({@link #WORDS} longs a slot), and made into its event by the consumer that takes it.
     */
    static final class Slots {
        /** A {@link DatEvent}, or the {@link Endpoint} of a DTO completion kept in {@link #words}. */
        final Object[] events;
        /** The index + 1 of the event in each slot, 0 before the first (release stores, after the event). */
        final long[] published;
        /** A DTO completion's cookie, transferred length, and status, operation and RMR context. */
        final long[] words;
        final int mask;

        Slots(int n) {
            events = new Object[n];
            published = new long[n];
            words = new long[n * WORDS];
            mask = n - 1;
        }

        int length() {
            return mask + 1;
        }

        /**
         * Empties the slot of the taken {@code index} unless another did or does: the compare-and-set of
         * its published word from {@code index + 1} claims the clearing, and the release store of
         * {@code -(index + 1)} after it says that the slot may be reused.
         */
        void clear(long index) {
            int i = (int) index & mask;
            if (PUBLISHED.compareAndSet(published, i, index + 1, CLEARING)) {
                events[i] = null;
                PUBLISHED.setRelease(published, i, -(index + 1));
            }
        }

        /** Whether the slot of {@code index} holds that index's event (an acquire read). */
        boolean holds(long index) {
            return (long) PUBLISHED.getAcquire(published, (int) index & mask) == index + 1;
        }

        /** What the slot of {@code index} holds: an event, or the EP of a DTO completion in {@link #words}. */
        Object entry(long index) {
            return events[(int) index & mask];
        }

        /** Copies the entry of {@code index} from {@code from} into this storage's slot of that index. */
        void copy(Slots from, long index) {
            int f = (int) index & from.mask;
            int to = (int) index & mask;
            events[to] = from.events[f];
            System.arraycopy(from.words, f * WORDS, words, to * WORDS, WORDS);
            published[to] = index + 1;
        }
    }

    /** Longs of a slot's {@code words}. */
    static final int WORDS = 4;
    /** The published word of a slot being emptied by the one that claimed it. */
    static final long CLEARING = Long.MIN_VALUE;
    /** How often the producer looks again at a slot being emptied before it grows the ring instead. */
    private static final int CLEARING_SPINS = 128;

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
        Slots s = room(t);
        boolean crossed = crosses(t);
        int i = (int) t & s.mask;
        s.events[i] = event;
        return publish(s, i, t, crossed);
    }

    /**
     * Appends a DTO completion of {@code ep} as its values (producer side claimed), not as an event
     * object: the consumer that takes it makes the event ({@link #poll}). It reads the values from the
     * slot's words, whose addresses it knows, rather than from an object the producer's CPU has just
     * written, whose address it learns only from the slot: one cache miss less, in a row, per hand-off.
     *
     * @return as {@link #append}
     */
    boolean appendDto(Endpoint ep, long cookie, DtoStatus status, long length, DtoOperation op, int rmrContext) {
        long t = tail;
        Slots s = room(t);
        boolean crossed = crosses(t);
        int i = (int) t & s.mask;
        long[] w = s.words;
        w[i * WORDS] = cookie;
        w[i * WORDS + 1] = length;
        w[i * WORDS + 2] = status.ordinal() | op.ordinal() << 8 | (long) rmrContext << 32;
        s.events[i] = ep;
        return publish(s, i, t, crossed);
    }

    /**
     * The storage with an empty slot for index {@code t}: the ring grows if it is full, or if the slot's
     * taken event is still being cleared by its consumer after a brief wait.
     */
    private Slots room(long t) {
        Slots s = slots;
        if (t - headSeen >= s.length()) {
            headSeen = (long) HEAD.getVolatile(this);
            if (t - headSeen >= s.length()) {
                return grow(t);
            }
        }
        return emptied(s, t - s.length()) ? s : grow(t);
    }

    /**
     * Whether the slot of the taken index {@code old} is empty (or never held it), clearing it if its
     * consumer has not begun to: false only while its consumer is between its two stores, for longer
     * than a brief wait.
     */
    private static boolean emptied(Slots s, long old) {
        if (old < 0) {
            return true;
        }
        int i = (int) old & s.mask;
        for (int spins = 0; ; spins++) {
            long p = (long) PUBLISHED.getAcquire(s.published, i);
            if (p == -(old + 1) || p == 0) {
                return true;
            }
            if (p == old + 1) {
                s.clear(old);
            } else if (spins < CLEARING_SPINS) {
                Thread.onSpinWait();
            } else {
                return false;
            }
        }
    }

    private boolean publish(Slots s, int i, long t, boolean crossed) {
        PUBLISHED.setRelease(s.published, i, t + 1);
        TAIL.setRelease(this, t + 1);
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
     * Twice the slots, the queued events copied (from {@code head}, which consumers may move meanwhile).
     * An event taken from the old slots while they were copied is cleared in the new ones: here if
     * {@code head} shows it taken once they are published, else by its consumer, which looks at the
     * slots in use after its compare-and-set ({@link #vacate}).
     */
    private Slots grow(long t) {
        Slots old = slots;
        Slots larger = new Slots(old.length() << 1);
        long h = (long) HEAD.getVolatile(this);
        for (long i = h; i < t; i++) {
            larger.copy(old, i);
        }
        slots = larger;
        long taken = (long) HEAD.getVolatile(this);
        for (long i = h; i < taken; i++) {
            larger.clear(i);
        }
        headSeen = taken;
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
        return (DatEvent) take(null);
    }

    /**
     * Takes the oldest event into the caller's {@code slot}, a DTO completion field by field (nothing
     * is allocated); false if none.
     */
    boolean poll(EventSlot slot) {
        return take(slot) != null;
    }

    /**
     * Takes the oldest event: into {@code slot} if there is one (the slot is returned), else as a
     * {@link DatEvent} (a DTO completion's made now); null if none.
     */
    Object take(EventSlot slot) {
        while (true) {
            Slots s = slots;
            long h = head;
            if (!s.holds(h)) {
                if (s == slots && h == head) {
                    return null;
                }
                continue;
            }
            Object e = s.entry(h);
            if (e instanceof DatEvent event) {
                if (HEAD.compareAndSet(this, h, h + 1)) {
                    vacate(s, h);
                    if (slot == null) {
                        return event;
                    }
                    slot.set(event);
                    return slot;
                }
                continue;
            }
            int w = ((int) h & s.mask) * WORDS;
            long cookie = s.words[w];
            long length = s.words[w + 1];
            long meta = s.words[w + 2];
            if (HEAD.compareAndSet(this, h, h + 1)) {
                vacate(s, h);
                DtoStatus status = STATUS[(int) meta & 0xff];
                DtoOperation op = OPERATION[(int) (meta >>> 8) & 0xff];
                if (slot == null) {
                    return new DatEvent.DtoCompletion(evd, (Endpoint) e, cookie, status, length, op,
                            (int) (meta >>> 32));
                }
                slot.setDtoCompletion(evd, (Endpoint) e, cookie, status, length, op, (int) (meta >>> 32));
                return slot;
            }
        }
    }

    /**
     * Clears the slot of {@code h}, just taken from {@code s}, and of any newer slots a growth copied it
     * into, so that the ring keeps nothing of a dequeued event. A growth that copied it publishes its
     * slots before it reads {@code head} again, and this reads the slots in use after the
     * compare-and-set that moved {@code head}: one of the two sees the other and clears the copy.
     */
    private void vacate(Slots s, long h) {
        s.clear(h);
        for (Slots now = slots; now != s; now = slots) {
            s = now;
            s.clear(h);
        }
    }

    private static final DtoStatus[] STATUS = DtoStatus.values();
    private static final DtoOperation[] OPERATION = DtoOperation.values();

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
            if (s.holds(i) && s.entry(i) instanceof DatEvent e && !(e instanceof DatEvent.DtoCompletion)) {
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
    /** The EVD whose events these are (the DTO completions kept as values name it). */
    EventDispatcher evd;
}
