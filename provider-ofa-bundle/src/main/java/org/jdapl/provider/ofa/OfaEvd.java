package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;

/**
 * An EVD: a queue of events with blocking waits ({@link EvdQueue}); for the DTO or RMR bind streams,
 * a completion queue ({@link EvdCq}: its lifecycle and polling) drained by the IA's event thread or by
 * the consumer's own poll ({@link PollHandoff}), and a wait into the caller's slot that allocates
 * nothing ({@link SlotWait}). Other events are queued directly. Overflow is reported; an empty wait
 * times out; waiters are released by the IA's close with DAT_ABORT (OBJ_11).
 *
 * <h2>The lock protocol</h2>
 * Two locks, never nested: the CQ's poll lock ({@link EvdCq#lock}) and the queue lock ({@link EvdQueue}).
 * <ul>
 * <li>Every poll of the CQ (the event thread's, a waiter's, a dequeuing consumer's) runs under the poll
 *     lock; each completion becomes an event through the router and the EP it names, and comes back
 *     here ({@link #enqueue}, {@link #dtoCompleted}) still under the poll lock.
 * <li>{@link PollHandoff}'s state (which thread polls for a hand-over, the event or slot it hands over
 *     to) is written and read under the poll lock only. An event goes to that thread rather than to
 *     the queue only while the queue's busy count (queued events plus waiting threads, published with
 *     release semantics under the queue lock) is what the poll found: 0, or 1 for the slot's own
 *     waiter. Otherwise it is queued, so events keep their order. A poll that fails after it handed an
 *     event over queues that event: nothing is lost.
 * <li>The queue, its waiters, its enabled/waitable states and its CNO change under the queue lock;
 *     a dequeue that finds no CQ event and a busy count of 0 returns without taking it.
 * <li>A waiter arms the CQ outside the queue lock before it blocks and polls once more after the arm
 *     (a completion before the arm raises no event). A {@code Condition} waiter is signalled by the
 *     queue; the one parked slot waiter ({@link SlotWait}) is unparked by the queue's signals and by
 *     the CQ's event, which the event thread then leaves to it to poll.
 * </ul>
 *
 * <p>Behaviours: OBJ_03, OBJ_04, OBJ_11.
 */
final class OfaEvd extends OfaHandle implements EventDispatcher, IaObjects.Owned {
    static {
        // OBJ_11: the errors released waiters return are made once, before any thread waits; else 1,000
        // virtual threads released by a close would load and initialize them pinned to their carriers.
        new DatException(DatReturnType.ABORT, "").getMessage();
        DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_DEAD, "").getMessage();
        HandleType.EVD.invalid("").getMessage();
    }

    private final OfaIa ia;
    /** The IA's router: the EVD's CQ is entered there while it exists. */
    private final OfaRouter router;
    /** Where rdma_cm events come from, for a consumer busy-polling an EVD without a CQ. */
    private final CmProgress cmProgress;
    private final Set<EvdFlag> flags;
    private final boolean async;
    /** The completion queue (none for EVDs without DTO/RMR bind streams): its lifecycle and polling. */
    final EvdCq cq;
    private final EvdQueue queue;
    private final PollHandoff handoff;
    private final SlotWait slotWait;
    /** EPs and service points that use this EVD. Guarded by the IA lock. */
    int users;
    /** The EVD's counters (DCNT_EVD_*): {@link Counts} says who writes them. */
    private final Counts counts = Counts.of(EvdCounter.class);

    OfaEvd(OfaIa ia, int qlen, OfaCno cno, Set<EvdFlag> flags, boolean async) {
        super(HandleType.EVD);
        this.ia = ia;
        this.router = ia.router();
        this.cmProgress = router.cmProgress();
        this.cq = new EvdCq(ia.device().context, ia.compChannel(), router.route(this));
        this.queue = new EvdQueue(this, cq, counts, qlen, cno);
        this.handoff = new PollHandoff(cq, queue, this::enqueue);
        this.slotWait = new SlotWait(queue, handoff, cq);
        this.flags = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
        this.async = async;
    }

    /**
     * {@code dat_evd_create}: an EVD of the DTO or RMR bind streams gets a CQ on the IA's completion
     * channel, armed at once; the others are queues only.
     */
    static OfaEvd create(OfaIa ia, int minQlen, Cno cno, Set<EvdFlag> flags) {
        if (flags == null || flags.isEmpty()) {
            throw DatException.invalidParameter(4, "an EVD needs at least one event stream");
        }
        if (flags.contains(EvdFlag.ASYNC)) {
            throw DatException.invalidParameter(4, "the ofa provider has one asynchronous EVD per IA, made at open");
        }
        return ia.locked(() -> {
            checkQlen(ia, minQlen);
            OfaCno c = ia.ownCno(cno, 3);
            OfaEvd evd = new OfaEvd(ia, minQlen, c, flags, false);
            if (EvdCq.needed(flags)) {
                evd.createCq(minQlen);
            }
            if (c != null) {
                c.attach();
            }
            ia.objects().add(HandleType.EVD, evd);
            return evd;
        });
    }

    /** Makes the CQ, armed at once, and enters it in the router (IA lock held). */
    private void createCq(int minQlen) {
        cq.create(minQlen);
        router.addCq(cq.segment, this);
    }

    /** Destroys the CQ (once the event thread has acknowledged its events) and closes the queue. IA lock held. */
    @Override
    public void destroy() {
        ia.objects().remove(HandleType.EVD, this);
        if (cq.present()) {
            router.removeCq(cq.segment);
        }
        cq.destroy();
        closed();
    }

    /** A completion event of the CQ arrived (event thread, after acknowledging it). */
    void cqEvent() {
        if (slotWait.wakeForCq()) {
            return; // the waiter polls the CQ into its slot itself
        }
        cq.poll();
        if (queue.hasCno() || cq.closingUsers.get() > 0) {
            cq.armAndPoll();
        }
    }

    /** An EVD's length, at create and resize: 1 up to the device's CQ size. */
    private static void checkQlen(OfaIa ia, int minQlen) {
        if (minQlen < 1 || minQlen > ia.maxEvdQlen()) {
            throw DatException.invalidParameter(2, "EVD length " + minQlen + " is outside 1.." + ia.maxEvdQlen());
        }
    }

    /** Polls the CQ empty, if the EVD has one; see {@link EvdCq#poll}. */
    void pollCq() {
        cq.poll();
    }

    /** Arms the CQ and polls it; see {@link EvdCq#armAndPoll}. */
    void armAndPoll() {
        cq.armAndPoll();
    }

    /** The CQ, for a queue pair's creation (NULL for an EVD without one). */
    MemorySegment cqSegment() {
        return cq.segment;
    }

    /** The room of the CQ, which the EPs' queues take and give back. */
    CqRoom room() {
        return cq.room;
    }

    /**
     * Keeps the CQ armed and polled after each of its events ({@code on}), or no longer, for an EP of
     * this EVD whose connection is ending, so that its flushes are seen (counted per EP).
     */
    void keepArmed(boolean on) {
        if (on) {
            cq.closingUsers.incrementAndGet();
        } else {
            cq.closingUsers.decrementAndGet();
        }
    }

    OfaIa ia() {
        return ia;
    }

    boolean isAsync() {
        return async;
    }

    Set<EvdFlag> flags() {
        return flags;
    }

    @Override
    public EvdParam query() {
        live();
        return queue.param(ia, flags);
    }

    /** {@code dat_evd_free}; see {@link EventDispatcher#free()}. */
    @Override
    public void free() {
        ia.free(this, () -> {
            if (async) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                        "the asynchronous EVD of IA " + ia.name() + " is freed by closing the IA");
            }
            if (users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                        "EVD is used by " + users + " EP(s) or service point(s)");
            }
            checkNoWaiters();
        });
    }

    /** Checks that nothing waits; called by the IA under its lock before destroying the CQ. */
    void checkNoWaiters() {
        queue.checkNoWaiters();
    }

    /** Marks the EVD freed and wakes anyone left (for IA close). */
    void closed() {
        markFreed();
        queue.close();
    }

    @Override
    public void resize(int minQlen) {
        live();
        checkQlen(ia, minQlen);
        queue.resize(minQlen, () -> {
            ia.lock().lock();
            try {
                cq.resize(minQlen);
            } finally {
                ia.lock().unlock();
            }
        });
    }

    /** {@code dat_evd_post_se}: the consumer's pointer is queued as it is. Behaviours: OBJ_09. */
    @Override
    public void postSoftwareEvent(Object pointer) {
        live();
        if (!flags.contains(EvdFlag.SOFTWARE)) {
            throw DatException.invalidParameter(1, "the EVD was not created with the SOFTWARE stream");
        }
        queue.post(new DatEvent.Software(this, pointer));
    }

    /**
     * Queues an event from the provider (event thread, or a consumer's poll, which may take it
     * straight: {@link PollHandoff}). A full queue reports ASYNC_ERROR_EVD_OVERFLOW on the IA's
     * asynchronous EVD and keeps the event.
     */
    void enqueue(DatEvent event) {
        if (isFreed()) {
            return;
        }
        count(event);
        if (handoff.take(event)) {
            return;
        }
        if (queue.offer(event)) {
            ia.reportOverflow(this);
        }
    }

    /**
     * A successful DTO completion (poll lock held): written field by field into the slot of a
     * {@link #dequeue(EventSlot)} polling in this thread, so that nothing is allocated, else queued
     * as an event.
     */
    void dtoCompleted(OfaEp ep, long cookie, long length, DtoOperation op, int rmrContext) {
        EventSlot s = isFreed() ? null : handoff.claimSlot();
        if (s != null) {
            s.setDtoCompletion(this, ep, cookie, DtoStatus.SUCCESS, length, op, rmrContext);
            return;
        }
        enqueue(new DatEvent.DtoCompletion(this, ep, cookie, DtoStatus.SUCCESS, length, op, rmrContext));
    }

    /**
     * {@code dat_evd_dequeue}: polls the CQ, then takes the first event, if any; on an empty EVD without
     * a CQ it takes the IA's next rdma_cm event itself ({@link CmProgress}).
     */
    @Override
    public Optional<DatEvent> dequeue() {
        Optional<DatEvent> e = take();
        counts.inc(EvdCounter.DEQUEUE);
        counts.inc(e.isPresent() ? EvdCounter.DEQUEUE_FOUND : EvdCounter.DEQUEUE_NOT_FOUND);
        return e;
    }

    private Optional<DatEvent> take() {
        live();
        if (cq.present()) {
            // The first event the poll produces while nothing is queued and nobody waits is handed
            // straight to the caller (no queue lock, twice, for the usual case of a consumer busy-polling
            // its EVD); later ones are queued behind it as usual.
            DatEvent e = handoff.poll();
            if (e != null) {
                return Optional.of(e);
            }
        }
        if (!queue.idle()) {
            return queue.dequeue();
        }
        // Only the IA's rdma_cm and device events fill an EVD without a CQ: a consumer busy-polling it
        // takes the next rdma_cm event itself, which may be for this EVD.
        if (!cq.present() && cmProgress.poll() && !queue.idle()) {
            return queue.dequeue();
        }
        return Optional.empty();
    }

    /**
     * {@code dat_evd_dequeue} into the caller's slot: as {@link #dequeue()}, but the first event the
     * poll produces while nothing is queued and nobody waits is written into {@code s} (a DTO
     * completion field by field), so that a consumer polling its completions allocates nothing.
     * Behaviours: OBJ_03.
     */
    @Override
    public boolean dequeue(EventSlot s) {
        if (s == null) {
            throw DatException.invalidParameter(2, "no event slot to fill");
        }
        live();
        if (handoff.pollInto(s, 0)) {
            return true;
        }
        if (queue.idle()) {
            // As dequeue(): a consumer busy-polling an EVD without a CQ takes the next rdma_cm event itself.
            if (cq.present() || !cmProgress.poll() || queue.idle()) {
                return false;
            }
        }
        DatEvent e = queue.dequeue().orElse(null);
        if (e == null) {
            return false;
        }
        s.set(e);
        return true;
    }

    /**
     * {@code dat_evd_wait} into the caller's slot: for a threshold of 1 on an EVD with a CQ, a wait
     * that allocates nothing ({@link SlotWait}); otherwise as {@link #waitEvent(long, int)}.
     * Behaviours: OBJ_03, OBJ_11.
     */
    @Override
    public void waitEvent(long timeoutMicros, int threshold, EventSlot s) {
        if (s == null) {
            throw DatException.invalidParameter(4, "no event slot to fill");
        }
        live();
        if (threshold != 1 || timeoutMicros < 0 || !queue.waitable() || !cq.present() || !slotWait.waitInto(timeoutMicros, s)) {
            s.set(waitEvent(timeoutMicros, threshold));
        }
    }

    /** {@code dat_evd_wait}; see {@link EvdQueue#await}. Behaviours: OBJ_04, OBJ_11. */
    @Override
    public DatEvent waitEvent(long timeoutMicros, int threshold) {
        live();
        return queue.await(timeoutMicros, threshold);
    }

    /** Counts an event the provider queues (DTO_CALLBACK, CONN_CALLBACK; the IA's ASYNC_ERROR). */
    private void count(DatEvent event) {
        if (event instanceof DatEvent.DtoCompletion || event instanceof DatEvent.ExtendedDtoCompletion) {
            counts.inc(EvdCounter.DTO_CALLBACK);
        } else if (event instanceof DatEvent.Connection || event instanceof DatEvent.UdConnection) {
            counts.inc(EvdCounter.CONN_CALLBACK);
        } else if (async && event instanceof DatEvent.AsyncError) {
            ia.objects().count(IaCounter.ASYNC_ERROR);
        }
    }

    Counts counts() {
        return counts;
    }

    /** {@code dat_query_counters} on the EVD. Behaviours: EXT_09. */
    @Override
    public Counters<EvdCounter> queryCounters(boolean reset) {
        live();
        return Counts.query(EvdCounter.class, reset, counts);
    }

    @Override
    public int count() {
        live();
        cq.poll();
        return queue.size();
    }

    @Override
    public void enable() {
        live();
        queue.setEnabled(true);
    }

    @Override
    public void disable() {
        live();
        queue.setEnabled(false);
    }

    @Override
    public void setUnwaitable() {
        live();
        queue.setWaitable(false);
    }

    @Override
    public void clearUnwaitable() {
        live();
        queue.setWaitable(true);
    }

    @Override
    public void modifyCno(Cno newCno) {
        live();
        queue.setCno(ia.ownCno(newCno, 1));
    }

    @Override
    public String toString() {
        return "EVD " + flags + (async ? " (async)" : "");
    }
}
