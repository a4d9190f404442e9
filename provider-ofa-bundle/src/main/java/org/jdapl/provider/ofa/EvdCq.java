package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.EvdFlag;
import org.jdapl.provider.ofa.verbs.Structs.IbvCq;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsContext;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * The completion queue of an EVD of the DTO or RMR bind streams: its creation on the IA's completion
 * channel, resize and destruction, its arming, and its polling, each work completion handed to the
 * {@link Completions} it was given (the router's route to the EVD, which turns the completion into an
 * event of the EVD through the EP it names). An EVD of the other streams has one too, without a CQ
 * ({@link #segment} NULL): its polls return at once.
 *
 * <p>Polls run under {@link #lock}, and so do the destruction and the EVD's hand-off of polled events (whose
 * state it guards); never with the EVD's queue lock (the lock protocol is in the EVD's class comment).
 */
final class EvdCq {
    static final int POLL_BATCH = 16;

    /** Whether an EVD of these streams needs a completion queue: the DTO or RMR bind stream. */
    static boolean needed(Set<EvdFlag> flags) {
        return flags.contains(EvdFlag.DTO) || flags.contains(EvdFlag.RMR_BIND);
    }

    /** Where a polled work completion goes (poll lock held). */
    interface Completions {
        /** The work completion at address {@code wc}, valid until the next poll. */
        void completion(long wc);
    }

    private final VerbsContext verbs;
    /** Where polled work completions go. */
    private final Completions completions;
    /** The IA's completion channel, on which the CQ is made. */
    private final MemorySegment channel;
    /** The completion queue, or NULL for EVDs without DTO/RMR bind streams. Set under {@link #lock}. */
    volatile MemorySegment segment = MemorySegment.NULL;
    /** The address of {@link #segment} (0 while there is none), as the poll downcall takes it. */
    private volatile long address;
    /** Serialises polling of the CQ (consumer threads and the event thread) and its destruction. */
    final PollLock lock = new PollLock();
    /** The CQ's room for completions, which the EPs' queues take and give back. */
    final CqRoom room = new CqRoom();
    /** EPs of this CQ whose connection is ending: the CQ is kept armed so that their flushes are seen. */
    final AtomicInteger closingUsers = new AtomicInteger();
    /** The address of the work completion array the polls fill; freed under {@link #lock}. */
    private long wcsArg;
    private Arena wcArena;
    EvdCq(VerbsContext verbs, MemorySegment channel, Completions completions) {
        this.verbs = verbs;
        this.channel = channel;
        this.completions = completions;
    }

    /** {@code dat_evd_create}: makes the CQ, armed at once (IA lock held). */
    void create(int minQlen) {
        Verbs v = Verbs.get();
        MemorySegment cq;
        try {
            cq = v.createCq(verbs.pointer(), minQlen, channel);
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_create", e);
        }
        try {
            verbs.reqNotifyCq(cq, false);
        } catch (VerbsException e) {
            v.destroyCq(cq);
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_create", e);
        }
        attach(cq, cqe(cq));
    }

    /** The entries a CQ has, as the device made it ({@code ibv_cq.cqe}). */
    private static int cqe(MemorySegment cq) {
        return IbvCq.CQE.getInt(cq.reinterpret(IbvCq.S.size()));
    }

    /**
     * Destroys the CQ, if any, once the event thread has acknowledged its events (IA lock held; the
     * router no longer knows it).
     */
    void destroy() {
        if (segment.equals(MemorySegment.NULL)) {
            return;
        }
        MemorySegment c = detach();
        // Waits until the event thread has acknowledged the CQ's events; it acks before any lock.
        NativeErrors.quietly("ibv_destroy_cq", () -> Verbs.get().destroyCq(c));
    }

    /** {@code dat_evd_resize} of the CQ: not below the room its EPs' queues hold (IA lock held). */
    void resize(int newQlen) {
        if (segment.equals(MemorySegment.NULL)) {
            return;
        }
        int held = room.reserved();
        if (held > newQlen) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE, held
                    + " completions may still come to the EVD (its EPs' queues), more than the new length " + newQlen);
        }
        try {
            Verbs.get().resizeCq(segment, newQlen);
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_resize", e);
        }
        room.setCapacity(cqe(segment));
    }

    /** Takes the CQ made for the EVD ({@code cqe} entries as the device made it). */
    private void attach(MemorySegment newCq, int cqe) {
        wcArena = Arena.ofShared();
        // Polls run under the poll lock, and so does the arena's close.
        wcsArg = wcArena.allocate(WorkCompletion.BYTES * POLL_BATCH, 8).address();
        room.setCapacity(cqe);
        segment = newCq;
        address = newCq.address();
    }

    /** Detaches and returns the CQ for destruction (under the poll lock, so that no poll runs on it). */
    private MemorySegment detach() {
        lock.lock();
        try {
            MemorySegment c = segment;
            segment = MemorySegment.NULL;
            address = 0;
            if (wcArena != null) {
                wcsArg = 0;
                wcArena.close();
                wcArena = null;
            }
            return c;
        } finally {
            lock.unlock();
        }
    }

    /** Whether there is a CQ to poll (volatile read, no lock). */
    boolean present() {
        return address != 0;
    }

    /**
     * Polls the CQ empty, turning each work completion into an event (through the EP it names).
     * Called by waiting and dequeuing consumers and by the event thread; never with the queue lock.
     */
    void poll() {
        if (address == 0) {
            return;
        }
        lock.lock();
        try {
            pollLocked();
        } finally {
            lock.unlock();
        }
    }

    /**
     * One {@code ibv_poll_cq} of up to {@link #POLL_BATCH} completions, and more while batches come
     * full (poll lock held). Nothing but this object is live across the downcall: what the completions
     * need is read after it, so that the compiled poll need not keep it in stack slots.
     */
    void pollLocked() {
        long c = address;
        if (c == 0) {
            return;
        }
        int n = verbs.pollCq(c, POLL_BATCH, wcsArg);
        if (n > 0) {
            completions.completion(wcsArg);
            if (n > 1) {
                moreCompletions(c, n);
            }
        }
    }

    /**
     * Hands the second to {@code n}th polled completions of CQ {@code c} to their EPs, and polls on
     * while batches come full. Apart from the first, so that a busy-polling consumer's usual single
     * completion runs without a loop, whose values the compiled poll would keep in stack slots.
     */
    private void moreCompletions(long c, int polled) {
        int n = polled;
        int i = 1;
        while (true) {
            for (; i < n; i++) {
                completions.completion(wcsArg + i * WorkCompletion.BYTES);
            }
            if (n < POLL_BATCH) {
                return;
            }
            n = verbs.pollCq(c, POLL_BATCH, wcsArg);
            i = 0;
        }
    }

    /** Arms the CQ for its next completion event and polls what came before (event thread or waiter). */
    void armAndPoll() {
        arm();
        poll();
    }

    /** Arms the CQ for its next completion event (a waiter then polls what came before itself). */
    void arm() {
        lock.lock();
        try {
            if (segment.equals(MemorySegment.NULL)) {
                return;
            }
            verbs.reqNotifyCq(segment, false);
        } finally {
            lock.unlock();
        }
    }
}
