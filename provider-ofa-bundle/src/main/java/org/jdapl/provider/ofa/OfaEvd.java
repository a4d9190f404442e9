package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Counters;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;

/**
 * An EVD: a Java queue of events with blocking waits; for the DTO or RMR bind streams, a completion
 * queue ({@link EvdCq}: its lifecycle and polling) drained by the IA's event thread. Other events are
 * queued directly. Overflow is reported; an empty wait times out; a waiter blocks on a
 * {@link Condition} (a virtual thread leaves its carrier), released by the IA's close with DAT_ABORT
 * (OBJ_11). The lock protocol: a poll (under the CQ's poll lock) hands its event to the thread
 * dequeuing, a waiter arms the CQ before it blocks, a dequeue that finds nothing takes no queue lock.
 *
 * <p>The file is longer than the provider's others (about 750 lines) because its three ways of
 * handing an event over (the queue, the poll's hand-off to the dequeuing thread, and the caller's
 * {@code EventSlot} filled field by field) share one lock protocol and its private state; splitting
 * them would spread that protocol over several classes. The slot waiter's loop is in {@link SlotWait}.
 *
 * <p>Behaviours: OBJ_03, OBJ_04, OBJ_11.
 */
final class OfaEvd extends OfaHandle implements EventDispatcher, IaObjects.Owned {
    private static final VarHandle BUSY = VarHandles.field(MethodHandles.lookup(), "busy", int.class);

    static {
        // OBJ_11: the errors released waiters return are made once, before any thread waits; else 1,000
        // virtual threads released by a close would load and initialize them pinned to their carriers.
        new DatException(DatReturnType.ABORT, "").getMessage();
        DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_DEAD, "").getMessage();
        HandleType.EVD.invalid("").getMessage();
    }

    private final OfaIa ia;
    /** Where rdma_cm events come from, for a consumer busy-polling an EVD without a CQ. */
    private final CmProgress cmProgress;
    private final Set<EvdFlag> flags;
    private final boolean async;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<DatEvent> queue = new ArrayDeque<>();
    private int qlen;
    private int waiters;
    /**
     * Queued events plus waiting threads, written (release) under {@link #lock} whenever either
     * changes: a dequeue that finds the CQ and this at 0 returns without taking the lock.
     */
    private int busy;
    private boolean enabled = true;
    private boolean waitable = true;
    private OfaCno cno;
    /** The completion queue (none for EVDs without DTO/RMR bind streams): its lifecycle and polling. */
    final EvdCq cq;
    /**
     * The {@link Thread#threadId() id} of the thread polling inside {@link #dequeue()} (0: none), and the
     * event handed to it. Guarded by the CQ's poll lock.
     */
    private long dequeuer;
    private DatEvent handoff;
    /**
     * While {@link #dequeue(EventSlot)} polls: the caller's slot, which the first event the poll
     * produces fills ({@link #dtoCompleted} field by field), set to null once filled. Guarded by the
     * CQ's poll lock, as {@link #dequeuer}.
     */
    private boolean slotDequeue;
    private EventSlot slot;
    /** What {@link #BUSY} may hold for the slot to be filled: 1 while the slot's own waiter polls. */
    private int slotBusy;
    /**
     * The thread of a {@link #waitEvent(long, int, EventSlot)} parked for the CQ (null: none): woken
     * with {@code LockSupport.unpark} by the CQ's event (the event thread leaves the poll to it) and by
     * whatever signals waiters. Written under {@link #lock}.
     */
    private volatile Thread slotWaiter;
    /** How long {@link #waitEvent(long, int, EventSlot)} polls before it blocks ({@link WaitSpin}). */
    private final long waitSpinNanos = WaitSpin.nanos();
    /** EPs and service points that use this EVD. Guarded by the IA lock. */
    int users;
    /** The EVD's counters (DCNT_EVD_*): {@link Counts} says who writes them. */
    private final Counts counts = Counts.of(EvdCounter.class);

    OfaEvd(OfaIa ia, int qlen, OfaCno cno, Set<EvdFlag> flags, boolean async) {
        super(HandleType.EVD);
        this.ia = ia;
        this.cmProgress = ia.router().cmProgress();
        this.cq = new EvdCq(this, ia.device().context, ia.router(), ia.compChannel());
        this.qlen = qlen;
        this.cno = cno;
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
                evd.cq.create(minQlen);
            }
            if (c != null) {
                c.attach();
            }
            ia.objects().add(HandleType.EVD, evd);
            return evd;
        });
    }

    /** Destroys the CQ (once the event thread has acknowledged its events) and closes the queue. IA lock held. */
    @Override
    public void destroy() {
        ia.objects().remove(HandleType.EVD, this);
        cq.destroy();
        closed();
    }

    /** Polls the CQ empty, if the EVD has one; see {@link EvdCq#poll}. */
    void pollCq() {
        cq.poll();
    }

    /** Arms the CQ and polls it; see {@link EvdCq#armAndPoll}. */
    void armAndPoll() {
        cq.armAndPoll();
    }

    /** A completion event of the CQ arrived (event thread, after acknowledging it). */
    void cqEvent() {
        Thread w = slotWaiter;
        if (w != null && cno == null && cq.closingUsers.get() == 0) {
            LockSupport.unpark(w); // the waiter polls the CQ into its slot itself
            return;
        }
        pollCq();
        if (cno != null || cq.closingUsers.get() > 0) {
            armAndPoll();
        }
    }

    /** An EVD's length, at create and resize: 1 up to the device's CQ size. */
    private static void checkQlen(OfaIa ia, int minQlen) {
        if (minQlen < 1 || minQlen > ia.maxEvdQlen()) {
            throw DatException.invalidParameter(2, "EVD length " + minQlen + " is outside 1.." + ia.maxEvdQlen());
        }
    }

    boolean isAsync() {
        return async;
    }

    Set<EvdFlag> flags() {
        return flags;
    }

    OfaIa ia() {
        return ia;
    }

    @Override
    public EvdParam query() {
        live();
        lock.lock();
        try {
            return new EvdParam(ia, qlen, enabled, waitable, cno, flags);
        } finally {
            lock.unlock();
        }
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
        lock.lock();
        try {
            if (waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                        "EVD has " + waiters + " waiting thread(s)");
            }
        } finally {
            lock.unlock();
        }
    }

    /** Marks the EVD freed and wakes anyone left (for IA close). */
    void closed() {
        markFreed();
        lock.lock();
        try {
            queue.clear();
            updateBusy();
            changed.signalAll();
            wakeSlotWaiter();
            if (cno != null) {
                cno.detach();
                cno = null;
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void resize(int minQlen) {
        live();
        checkQlen(ia, minQlen);
        lock.lock();
        try {
            if (queue.size() > minQlen) {
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        queue.size() + " events are queued, more than the new length " + minQlen);
            }
            ia.lock().lock();
            try {
                cq.resize(minQlen);
            } finally {
                ia.lock().unlock();
            }
            qlen = minQlen;
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_evd_post_se}: the consumer's pointer is queued as it is. Behaviours: OBJ_09. */
    @Override
    public void postSoftwareEvent(Object pointer) {
        live();
        if (!flags.contains(EvdFlag.SOFTWARE)) {
            throw DatException.invalidParameter(1, "the EVD was not created with the SOFTWARE stream");
        }
        lock.lock();
        try {
            if (queue.size() >= qlen) {
                throw new DatException(DatReturnType.QUEUE_FULL, "EVD queue is full (" + qlen + " events)");
            }
            add(new DatEvent.Software(this, pointer));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues an event from the provider (event thread). A full queue reports
     * ASYNC_ERROR_EVD_OVERFLOW on the IA's asynchronous EVD and keeps the event.
     */
    void enqueue(DatEvent event) {
        if (isFreed()) {
            return;
        }
        count(event);
        // Only the dequeuing thread itself, polling under the CQ's poll lock, ever finds itself in dequeuer.
        if (dequeuer == Thread.currentThread().threadId() && (int) BUSY.getAcquire(this) == slotBusy) {
            if (slotDequeue) {
                EventSlot s = slot;
                if (s != null) {
                    s.set(event);
                    slot = null;
                    return;
                }
            } else if (handoff == null) {
                handoff = event;
                return;
            }
        }
        boolean overflow;
        lock.lock();
        try {
            overflow = queue.size() >= qlen;
            add(event);
        } finally {
            lock.unlock();
        }
        if (overflow) {
            ia.reportOverflow(this);
        }
    }

    /**
     * A successful DTO completion (poll lock held): written field by field into the slot of a
     * {@link #dequeue(EventSlot)} polling in this thread, so that nothing is allocated, else queued
     * as an event.
     */
    void dtoCompleted(OfaEp ep, long cookie, long length, DtoOperation op, int rmrContext) {
        EventSlot s = slot;
        if (s != null && dequeuer == Thread.currentThread().threadId() && (int) BUSY.getAcquire(this) == slotBusy
                && !isFreed()) {
            s.setDtoCompletion(this, ep, cookie, DtoStatus.SUCCESS, length, op, rmrContext);
            slot = null;
            return;
        }
        enqueue(new DatEvent.DtoCompletion(this, ep, cookie, DtoStatus.SUCCESS, length, op, rmrContext));
    }

    private void add(DatEvent event) {
        queue.addLast(event);
        updateBusy();
        if (enabled) {
            changed.signalAll();
            wakeSlotWaiter();
            if (waiters == 0 && cno != null) {
                cno.trigger(this);
            }
        }
    }

    private void updateBusy() {
        BUSY.setRelease(this, queue.size() + waiters);
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
            // its EVD); later ones are queued behind it as usual. The common path is kept in this one
            // method, so that the JIT compiles it whole.
            DatEvent e;
            cq.lock.lock();
            try {
                dequeuer = Thread.currentThread().threadId();
                cq.pollLocked();
                e = handoff;
                handoff = null;
            } finally {
                dequeuer = 0;
                DatEvent left = handoff;
                handoff = null;
                cq.lock.unlock();
                if (left != null) {
                    enqueue(left); // the poll failed after the hand-off: the event is queued, not lost
                }
            }
            if (e != null) {
                return Optional.of(e);
            }
        }
        if ((int) BUSY.getAcquire(this) != 0) {
            return dequeueQueued();
        }
        // Only the IA's rdma_cm and device events fill an EVD without a CQ: a consumer busy-polling it
        // takes the next rdma_cm event itself, which may be for this EVD.
        if (!cq.present() && cmProgress.poll() && (int) BUSY.getAcquire(this) != 0) {
            return dequeueQueued();
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
        if (pollInto(s, 0)) {
            return true;
        }
        if ((int) BUSY.getAcquire(this) == 0) {
            // As dequeue(): a consumer busy-polling an EVD without a CQ takes the next rdma_cm event itself.
            if (cq.present() || !cmProgress.poll() || (int) BUSY.getAcquire(this) == 0) {
                return false;
            }
        }
        DatEvent e = dequeueQueued().orElse(null);
        if (e == null) {
            return false;
        }
        s.set(e);
        return true;
    }

    /**
     * Polls the CQ (if any) in this thread; true if the first event the poll produced, while the EVD
     * held {@code busy} (queued events plus waiters: 0, or 1 for the slot's own waiter), went into
     * {@code s}. Later ones are queued behind it as usual.
     */
    boolean pollInto(EventSlot s, int busy) {
        if (!cq.present()) {
            return false;
        }
        boolean filled = false;
        cq.lock.lock();
        try {
            dequeuer = Thread.currentThread().threadId();
            slotDequeue = true;
            slotBusy = busy;
            slot = s;
            cq.pollLocked();
            filled = slot == null;
        } finally {
            boolean failedAfterFill = !filled && slotDequeue && slot == null;
            dequeuer = 0;
            slotDequeue = false;
            slotBusy = 0;
            slot = null;
            cq.lock.unlock();
            if (failedAfterFill) {
                enqueue(s.event()); // the poll failed after filling the slot: the event is queued, not lost
            }
        }
        return filled;
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
        if (threshold != 1 || timeoutMicros < 0 || !waitable || !cq.present()
                || !SlotWait.waitInto(this, timeoutMicros, s, waitSpinNanos)) {
            s.set(waitEvent(timeoutMicros, threshold));
        }
    }

    /** Whether nothing is queued and nobody waits (a volatile read, no lock). */
    boolean idle() {
        return (int) BUSY.getAcquire(this) == 0;
    }

    /**
     * Makes this thread the EVD's parked slot waiter, with the checks of a wait (ABORT once freed,
     * INVALID_STATE_EVD_UNWAITABLE); false (nothing changed) if an event is queued or another thread
     * waits: the caller then waits as {@link #waitEvent(long, int)} does.
     */
    boolean becomeSlotWaiter() {
        lock.lock();
        try {
            checkWaitable();
            if (!queue.isEmpty() || waiters > 0 || slotWaiter != null) {
                return false;
            }
            waiters++;
            slotWaiter = Thread.currentThread();
            updateBusy();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The parked slot waiter's look at the queue: its first event into {@code s} (true), after the checks. */
    boolean takeQueued(EventSlot s) {
        lock.lock();
        try {
            checkWaitable();
            DatEvent e = queue.pollFirst();
            if (e == null) {
                return false;
            }
            updateBusy();
            s.set(e);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The parked slot waiter leaves. */
    void leaveSlotWaiter() {
        lock.lock();
        try {
            waiters--;
            slotWaiter = null;
            updateBusy();
        } finally {
            lock.unlock();
        }
    }

    private void checkWaitable() {
        if (isFreed()) {
            throw new DatException(DatReturnType.ABORT, "the EVD was freed while waiting (IA closed)");
        }
        if (!waitable) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, "EVD is unwaitable");
        }
    }

    /** Wakes the parked slot waiter, if any (queue lock held). */
    private void wakeSlotWaiter() {
        Thread w = slotWaiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** {@link #dequeue} of a queued event (or of a waiter's EVD: an error). */
    private Optional<DatEvent> dequeueQueued() {
        lock.lock();
        try {
            if (waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                        "a thread waits on the EVD");
            }
            DatEvent e = queue.pollFirst();
            updateBusy();
            return Optional.ofNullable(e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public DatEvent waitEvent(long timeoutMicros, int threshold) {
        live();
        counts.inc(EvdCounter.WAIT);
        boolean blocked = false;
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout " + timeoutMicros);
        }
        long deadline = timeoutMicros >= Dat.TIMEOUT_INFINITE ? Long.MAX_VALUE
                : System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
        boolean armed = false;
        while (true) {
            pollCq();
            lock.lock();
            try {
                if (threshold < 1 || threshold > qlen) {
                    throw DatException.invalidParameter(3, "threshold " + threshold + " is outside 1.." + qlen);
                }
                if (isFreed()) {
                    throw new DatException(DatReturnType.ABORT, "the EVD was freed while waiting (IA closed)");
                }
                if (!waitable) {
                    throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE,
                            "EVD is unwaitable");
                }
                if (satisfied(threshold)) {
                    DatEvent e = queue.pollFirst();
                    updateBusy();
                    return e;
                }
                long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                if (left <= 0) {
                    throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no event within " + timeoutMicros + " us");
                }
                if (armed || !cq.present()) {
                    if (!blocked) {
                        blocked = true;
                        counts.inc(EvdCounter.WAIT_BLOCKED);
                    }
                    waiters++;
                    updateBusy();
                    try {
                        if (left == Long.MAX_VALUE) {
                            changed.await();
                        } else {
                            changed.awaitNanos(left);
                        }
                    } finally {
                        waiters--;
                        updateBusy();
                    }
                    armed = false;
                    continue;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DatException(DatReturnType.INTERRUPTED_CALL, "wait interrupted");
            } finally {
                lock.unlock();
            }
            // About to block: arm the CQ (outside the queue lock) so that the event thread wakes us.
            armAndPoll();
            armed = true;
        }
    }

    /** At least {@code threshold} events, or a first event that is not a DTO completion. */
    private boolean satisfied(int threshold) {
        DatEvent head = queue.peekFirst();
        return head != null && (queue.size() >= threshold || head.number() != EventNumber.DTO_COMPLETION);
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
        pollCq();
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void enable() {
        live();
        lock.lock();
        try {
            enabled = true;
            if (!queue.isEmpty()) {
                changed.signalAll();
                wakeSlotWaiter();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void disable() {
        live();
        lock.lock();
        try {
            enabled = false;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setUnwaitable() {
        live();
        lock.lock();
        try {
            waitable = false;
            changed.signalAll();
            wakeSlotWaiter();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void clearUnwaitable() {
        live();
        lock.lock();
        try {
            waitable = true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void modifyCno(Cno newCno) {
        live();
        OfaCno c = ia.ownCno(newCno, 1);
        lock.lock();
        try {
            if (cno != null) {
                cno.detach();
            }
            cno = c;
            if (c != null) {
                c.attach();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "EVD " + flags + (async ? " (async)" : "");
    }
}
