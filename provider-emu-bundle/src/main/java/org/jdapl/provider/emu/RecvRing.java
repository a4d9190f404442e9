package org.jdapl.provider.emu;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import org.jdapl.provider.emu.evd.RingSides;

import org.jdapl.dat.LmrTriplet;

/**
 * The receive queue of one EP: a ring of posted receives in posting order, filled by the EP's
 * {@code dat_ep_post_recv} and emptied by the peer's sends, which share no lock. Producers (the EP's
 * posting threads, and the rare paths under the domain lock) exclude each other by claiming the
 * producer side with one compare-and-set ({@link #lockProducer}); the one consumer at a time is the
 * holder of the connected sender's {@link SendLock} (the peer's sends, fast or through its link's
 * engine) or, once the link is closed, of the domain lock (the flush of a disconnect). Receives leave
 * the ring only from its head, so they complete in posting order.
 *
 * <p>The layout follows {@link EventRing}: the producer's fields, the consumer's and the shared ones
 * on lines of their own; a receive is published by a release store of its slot and seen by the slot
 * being non-null; taken slots are cleared a block at a time, so the producer reads the consumer's
 * fields only when its cached views say the ring may be full. The ring holds at least
 * {@code maxRecvDtos + BLOCK} slots ({@link #resize}), so that a producer that respects the EP's
 * maximum always finds its slot cleared.
 *
 * <p>Beside each slot the ring keeps what a sender needs of the receive: its segments ({@code iovs})
 * and its capacity, cookie and completion flags ({@code words}, {@value #WORDS} longs a slot), written
 * before the slot's release store ({@link #add}). A sender reads them at the head's index
 * ({@link #headCapacity} and the like): loads that do not wait for the slot's contents, where reading
 * the receive object the other CPU just wrote would be a second dependent miss per message. A receive
 * the head's consumer takes leaves the ring once, so it completes once ({@link EmuEp#completeTakenRecv}).
 *
 * <p>Receives that completed and that nothing refers to any more go back to the EP's next posts through
 * the ring's spares ({@link #recycle}, {@link #takeSpare}): a second ring of as many slots, filled by the
 * consumer of the moment and emptied by the producer, each side with an index of its own on its own line,
 * a spare published by its slot being non-null. Every receive a stream keeps posted comes back as a spare,
 * so steady traffic allocates none however many receives are outstanding.
 *
 * <p>Behaviours: DISC_02, DISC_08: every receive posted while the EP is not DISCONNECTED enters the
 * ring and leaves it once, taken by a send or flushed ({@link EpQueues#flush}).
 */
public final class RecvRing extends RecvRingShared {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(WorkRequest.Recv[].class);
    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();
    private static final VarHandle HEAD = RingSides.field(LOOKUP, RecvRingConsumer.class, "head", long.class);
    private static final VarHandle TAIL = RingSides.field(LOOKUP, RecvRingProducer.class, "tail", long.class);
    private static final VarHandle CLEARED = RingSides.field(LOOKUP, RecvRingConsumer.class, "cleared", long.class);
    private static final VarHandle PRODUCING = RingSides.field(LOOKUP, RecvRingProducer.class, "producing", int.class);

    /** Slots cleared together by the consumer. */
    static final int BLOCK = RingSides.BLOCK;
    /** Longs of a slot's {@code words}: the receive's capacity, cookie and completion flags. */
    static final int WORDS = 4;

    RecvRing(int maxRecvDtos) {
        int n = slotsFor(maxRecvDtos);
        this.slots = new WorkRequest.Recv[n];
        this.iovs = new Object[n];
        this.words = new long[n * WORDS];
        this.spares = new WorkRequest.Recv[n];
    }

    private static int slotsFor(int maxRecvDtos) {
        int needed = Math.max(1, maxRecvDtos) + BLOCK;
        return Integer.highestOneBit(needed - 1) << 1;
    }

    // ---------------------------------------------------------------- producer

    /** Claims the producer side (held for a few instructions by the EP's posting thread). */
    void lockProducer() {
        RingSides.claim(PRODUCING, this);
    }

    void unlockProducer() {
        RingSides.release(PRODUCING, this);
    }

    /** Whether {@code max} receives are queued (producer side claimed); reads the consumer's line only when near. */
    boolean holds(int max) {
        long t = tail;
        if (t - headSeen >= max) {
            headSeen = (long) HEAD.getVolatile(this);
        }
        return t - headSeen >= max;
    }

    /**
     * Appends {@code r} (producer side claimed, fewer than the ring's maximum queued: see {@link #holds}).
     *
     * @throws IllegalStateException if the ring has no cleared slot, which the maximum rules out
     */
    void add(WorkRequest.Recv r) {
        long t = tail;
        WorkRequest.Recv[] s = slots;
        if (t - clearedSeen >= s.length) {
            clearedSeen = (long) CLEARED.getVolatile(this);
            if (t - clearedSeen >= s.length) {
                throw new IllegalStateException("receive ring of " + s.length + " slots is full");
            }
        }
        int i = (int) t & (s.length - 1);
        iovs[i] = r.iov;
        long[] w = words;
        w[i * WORDS] = r.capacity;
        w[i * WORDS + 1] = r.cookie;
        w[i * WORDS + 2] = r.flagBits();
        SLOT.setRelease(s, i, r);
        TAIL.setRelease(this, t + 1);
    }

    // ---------------------------------------------------------------- consumer

    /** The oldest receive, or null (one read of the head slot). */
    WorkRequest.Recv peek() {
        WorkRequest.Recv[] s = slots;
        return (WorkRequest.Recv) SLOT.getAcquire(s, (int) head & (s.length - 1));
    }

    /**
     * The capacity of the oldest receive, or -1 if none (by the one consumer of the moment): the slot
     * and its words are read, not the receive object.
     */
    public long headCapacity() {
        int i = headSlot();
        return i < 0 ? -1 : capacityAt(i);
    }

    /**
     * The slot of the oldest receive, or -1 if none (by the one consumer of the moment): {@code head}
     * and the slot are read once, and the receive's values beside the slot are then read by that index
     * ({@link #capacityAt} and the like) until the consumer takes it.
     */
    public int headSlot() {
        WorkRequest.Recv[] s = slots;
        int i = (int) head & (s.length - 1);
        return SLOT.getAcquire(s, i) == null ? -1 : i;
    }

    /** The capacity of the receive in slot {@code i} (see {@link #headSlot}). */
    public long capacityAt(int i) {
        return words[i * WORDS];
    }

    /** The segments of the receive in slot {@code i}. */
    @SuppressWarnings("unchecked")
    public List<LmrTriplet> iovAt(int i) {
        return (List<LmrTriplet>) iovs[i];
    }

    /** The cookie of the receive in slot {@code i}. */
    public long cookieAt(int i) {
        return words[i * WORDS + 1];
    }

    /** The completion flags of the receive in slot {@code i}, as {@link WorkRequest#flagBits}. */
    public int flagsAt(int i) {
        return (int) words[i * WORDS + 2];
    }

    /** Takes the oldest receive, or returns null if none (by the one consumer of the moment). */
    WorkRequest.Recv take() {
        WorkRequest.Recv[] s = slots;
        long h = head;
        WorkRequest.Recv r = (WorkRequest.Recv) SLOT.getAcquire(s, (int) h & (s.length - 1));
        if (r == null) {
            return null;
        }
        long next = h + 1;
        long c = cleared;
        long nowCleared = RingSides.clearTaken(s, next, c);
        if (nowCleared != c) {
            RingSides.clearTaken(iovs, next, c);
            CLEARED.setRelease(this, nowCleared);
        }
        HEAD.setRelease(this, next);
        return r;
    }

    /**
     * {@link #take} by a consumer that completes the receive from the values beside its slot and lets
     * go of the object ({@link org.jdapl.provider.emu.loopback.LoopbackLink#trySend}): it becomes the ring's spare for the next post.
     */
    public void takeRecycling() {
        WorkRequest.Recv r = take();
        if (r != null) {
            recycle(r);
        }
    }

    /**
     * Makes {@code r}, a receive taken from this ring that completed and that nothing refers to any
     * more, a spare for the EP's next post (by the ring's consumer of the moment: {@link #takeRecycling},
     * a tcp engine's {@link EpQueues#recycle}). When every spare slot is full, {@code r} is left to the
     * collector.
     */
    void recycle(WorkRequest.Recv r) {
        WorkRequest.Recv[] s = spares;
        long t = spareTail;
        int i = (int) t & (s.length - 1);
        if (SLOT.getAcquire(s, i) == null) {
            SLOT.setRelease(s, i, r);
            spareTail = t + 1;
        }
    }

    /** A spare receive for a new post, or null (producer side claimed, or the domain lock held with no consumer). */
    WorkRequest.Recv takeSpare() {
        WorkRequest.Recv[] s = spares;
        long h = spareHead;
        int i = (int) h & (s.length - 1);
        WorkRequest.Recv r = (WorkRequest.Recv) SLOT.getAcquire(s, i);
        if (r != null) {
            SLOT.setRelease(s, i, null);
            spareHead = h + 1;
        }
        return r;
    }

    /** Whether no receive is queued (a hint unless the caller excludes producers and the consumer). */
    boolean isEmpty() {
        return peek() == null;
    }

    /** Receives queued (a count of the moment). */
    int size() {
        return (int) ((long) TAIL.getAcquire(this) - (long) HEAD.getAcquire(this));
    }

    /**
     * Makes room for {@code maxRecvDtos} receives (producer side claimed, no consumer: the EP is not
     * connected), keeping the queued ones in order.
     */
    void resize(int maxRecvDtos) {
        int n = slotsFor(maxRecvDtos);
        WorkRequest.Recv[] old = slots;
        if (n == old.length) {
            return;
        }
        long h = head;
        long t = tail;
        WorkRequest.Recv[] larger = new WorkRequest.Recv[Math.max(n, Integer.highestOneBit((int) (t - h)) << 2)];
        Object[] largerIovs = new Object[larger.length];
        long[] largerWords = new long[larger.length * WORDS];
        for (long i = h; i < t; i++) {
            int from = (int) i & (old.length - 1);
            int to = (int) i & (larger.length - 1);
            larger[to] = old[from];
            largerIovs[to] = iovs[from];
            System.arraycopy(words, from * WORDS, largerWords, to * WORDS, WORDS);
        }
        iovs = largerIovs;
        words = largerWords;
        slots = larger;
        spares = new WorkRequest.Recv[larger.length];
        spareHead = 0;
        spareTail = 0;
        CLEARED.setRelease(this, h);
        clearedSeen = h;
        headSeen = h;
    }
}

// The layout of a RecvRing: the producer's, the consumer's and the shared fields on lines of their own.

/** Keeps the producer's line apart from whatever precedes the object. */
abstract class RecvRingPadBefore {
    @SuppressWarnings("unused")
    long p0, p1, p2, p3, p4, p5, p6, p7;
}

/** Written by the producer only (with the producer side claimed). */
abstract class RecvRingProducer extends RecvRingPadBefore {
    /** 1 while a producer has claimed its side. */
    int producing;
    /** The index the next receive goes to. */
    long tail;
    /** The producer's last read of {@code head}. */
    long headSeen;
    /** The producer's last read of {@code cleared}. */
    long clearedSeen;
    /** The index of the next spare the producer takes ({@link RecvRing#takeSpare}). */
    long spareHead;
}

abstract class RecvRingPadMiddle extends RecvRingProducer {
    @SuppressWarnings("unused")
    long m0, m1, m2, m3, m4, m5, m6, m7;
}

/** Written by the consumer of the moment only. */
abstract class RecvRingConsumer extends RecvRingPadMiddle {
    /** The index of the oldest receive. */
    volatile long head;
    /** Every slot of an index below this one is cleared. */
    volatile long cleared;
    /** The index the consumer's next spare goes to ({@link RecvRing#recycle}). */
    long spareTail;
}

abstract class RecvRingPadAfter extends RecvRingConsumer {
    @SuppressWarnings("unused")
    long a0, a1, a2, a3, a4, a5, a6, a7;
}

/** Read by both sides, replaced only by {@link RecvRing#resize} while nobody consumes. */
abstract class RecvRingShared extends RecvRingPadAfter {
    volatile WorkRequest.Recv[] slots;
    /** Each slot's receive's segments (written before the slot; replaced with it). */
    Object[] iovs;
    /** {@link RecvRing#WORDS} longs a slot: capacity, cookie, flags (written before the slot; replaced with it). */
    long[] words;
    /** Receives to reuse, published by a non-null slot ({@link RecvRing#recycle}; replaced with the slots). */
    WorkRequest.Recv[] spares;
}
