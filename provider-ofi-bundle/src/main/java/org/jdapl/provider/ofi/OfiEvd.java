package org.jdapl.provider.ofi;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.HandleType;

/**
 * An EVD: a queue of DAT events, and for the DTO stream a libfabric CQ ({@code FI_CQ_FORMAT_DATA},
 * errors through {@code fi_cq_readerr}) that the EPs using the EVD are bound to. {@link #dequeue} and
 * {@link #waitEvent} read the CQ (and, for connection streams, the IA's EQ) in the caller's thread, so
 * a consumer that polls never depends on the progress thread; a waiter parks between looks and is
 * woken by the progress thread when it queues an event. Each operation's context names its EP and
 * queue slot ({@link DtoQueue}); the completion goes to that EP ({@link EpCompletions}), which queues
 * its event here.
 * While a consumer polls the EVD with {@link #dequeue} the IA's progress thread leaves its CQ to that
 * consumer ({@link #pollMark}: each dequeue marks it without reading a clock, a wait clears it): two
 * readers of one CQ would fight over libfabric's locks, and the thread, woken by every completion,
 * would take the CPU the polling consumer needs.
 * Posting DTOs reserves room here ({@link #reserve}): a post that could overflow the EVD fails
 * INSUFFICIENT_RESOURCES, and an event that finds the queue full anyway is reported as
 * ASYNC_ERROR_EVD_OVERFLOW on the async EVD.
 *
 * <p>Length (over 500 lines): the event queue, its room reservation and its waiter share one monitor
 * (the EVD itself): a wait's wake-up, an enqueue's CNO trigger and a free's release of the waiter are
 * correct only under it; the queue's storage ({@link EvdRing}), the CQ's reads ({@link CqReader}), the
 * hand-over of completions to EPs ({@link EpCompletions}) and the poll mark ({@link PollMark}) are
 * classes of their own.
 *
 * <p>Behaviours: OBJ_03, OBJ_04, OBJ_09.
 */
final class OfiEvd extends OfiObject implements EventDispatcher {
    private final Set<EvdFlag> flags;
    private final boolean async;
    private final EvdRing queue;
    private volatile int qlen;
    private volatile OfiCno cno;
    private volatile boolean enabled = true;
    private volatile boolean waitable = true;
    private Thread waiter;
    private boolean overflowReported;
    final AtomicInteger users = new AtomicInteger();
    /** The receive CQs of the EPs on an SRQ that use this EVD for their receives ({@link EpSrq}). */
    private volatile EpSrq[] srqCqs = new EpSrq[0];
    private final AtomicInteger reserved = new AtomicInteger();
    /** The DTO stream's CQ, null without that stream. */
    private final CqReader reader;
    private final CqReader.Sink sink = new EpCompletions(ia);
    /** The EVD's counters (DAT_COUNTERS): dequeues. */
    final OfiCounts counts = new OfiCounts(EvdCounter.values().length);
    final long cq;
    /** The CQ's wait file descriptor ({@code FI_WAIT_FD}), -1 without one. */
    final int waitFd;
    private final int cqSize;
    /** Whether a consumer is polling the EVD, as the progress thread sees it: dequeues mark it, a wait clears it. */
    final PollMark pollMark = new PollMark();

    OfiEvd(OfiIa ia, int qlen, OfiCno cno, Set<EvdFlag> flags, boolean async) {
        super(ia, HandleType.EVD);
        this.flags = EnumSet.copyOf(flags);
        this.async = async;
        this.qlen = qlen;
        this.queue = new EvdRing(Math.min(qlen, 1024));
        this.cno = cno;
        if (flags.contains(EvdFlag.DTO)) {
            cqSize = Math.max(qlen * 2, 256);
            reader = new CqReader(ia, cqSize);
            cq = reader.cq;
            waitFd = reader.waitFd;
            ia.progress.addCq(this);
        } else {
            reader = null;
            cq = 0;
            waitFd = -1;
            cqSize = 0;
        }
        if (cno != null) {
            cno.users.incrementAndGet();
        }
        if (!async) {
            ia.added(this);
        }
    }

    static OfiEvd of(OfiIa ia, EventDispatcher evd, DatReturnSubtype sub) {
        if (evd == null) {
            return null;
        }
        if (!(evd instanceof OfiEvd e) || e.ia != ia || e.freed) {
            throw DatException.invalidHandle(sub, "not a live EVD of this IA");
        }
        return e;
    }

    static OfiEvd crEvd(OfiIa ia, EventDispatcher evd) {
        OfiEvd e = of(ia, evd, DatReturnSubtype.INVALID_HANDLE_EVD_CR);
        if (e == null || !e.flags.contains(EvdFlag.CR)) {
            throw DatException.invalidParameter(2, "the EVD has no connection request stream");
        }
        return e;
    }

    boolean has(EvdFlag f) {
        return flags.contains(f);
    }

    /**
     * Sets room aside for one completion; false when the EVD could overflow (the post then fails
     * INSUFFICIENT_RESOURCES).
     */
    boolean reserve() {
        while (true) {
            int r = reserved.get();
            if (r >= qlen) {
                return false;
            }
            if (reserved.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }

    /** Gives back room set aside for a completion that queues no event (a suppressed one). */
    void unreserve() {
        reserved.decrementAndGet();
    }

    /** Queues an event that had room set aside. */
    void enqueueReserved(DatEvent e) {
        enqueue(e, null, 0, null, 0, null, true);
    }

    /** Queues an event; if the EVD is full the event is lost and reported as an overflow. */
    void enqueue(DatEvent e) {
        enqueue(e, null, 0, null, 0, null, false);
    }

    /**
     * Queues a DTO completion of {@code ep} by its fields (nothing is allocated); {@code hadRoom} if room
     * was set aside for it at the post, else it may overflow the EVD as {@link #enqueue} may.
     */
    void enqueueDto(OfiEp ep, long cookie, DtoStatus status, long length, DtoOperation op, boolean hadRoom) {
        enqueue(null, ep, cookie, status, length, op, hadRoom);
    }

    private void enqueue(DatEvent e, OfiEp ep, long cookie, DtoStatus status, long length, DtoOperation op,
                         boolean hadRoom) {
        OfiCno notify = null;
        boolean overflow = false;
        synchronized (this) {
            if (freed) {
                return;
            }
            if (!hadRoom && !reserve()) {
                overflow = !overflowReported;
                overflowReported = true;
            } else {
                if (e != null) {
                    queue.add(e);
                } else {
                    queue.addDto(ep, cookie, status, length, op);
                }
                if (waiter == null && enabled) {
                    notify = cno;
                }
                notifyAll();
            }
        }
        if (overflow && !async) {
            ia.asyncEvd.enqueue(new DatEvent.AsyncError(ia.asyncEvd, EventNumber.ASYNC_ERROR_EVD_OVERFLOW, this, 0,
                    "EVD overflow: an event was lost"));
        }
        if (notify != null) {
            notify.trigger(this);
        }
    }

    /** Reads up to a batch of completions from the CQ and hands them to their EPs; the number read. */
    int pollCq() {
        int m = 0;
        for (EpSrq s : srqCqs) { // an array: the loop allocates nothing
            m += s.poll();
        }
        return m + pollOwnCq();
    }

    /** Adds ({@code add}) or removes an SRQ EP's receive CQ from those this EVD reads. */
    synchronized void srqCq(EpSrq s, boolean add) {
        java.util.List<EpSrq> l = new java.util.ArrayList<>(java.util.List.of(srqCqs));
        if (add) {
            l.add(s);
        } else {
            l.remove(s);
        }
        srqCqs = l.toArray(new EpSrq[0]);
        ia.progress.waitSetChanged();
    }

    EpSrq[] srqCqs() {
        return srqCqs;
    }

    private int pollOwnCq() {
        return reader == null || freed ? 0 : reader.read(sink);
    }

    /**
     * Runs {@code r} with the CQ's lock held, so that no thread reads the CQ meanwhile
     * ({@link CqReader#withLocked}).
     */
    void withCqLocked(Runnable r) {
        if (reader == null) {
            r.run();
        } else {
            reader.withLocked(r);
        }
    }

    /**
     * A post found its request queue full ({@link OfiEp#postRequest}): the CQ is read once (after a
     * reader that holds it), so that a signalled completion there retires the unsignalled requests
     * before it. Called without the EP's lock: a reader holding the CQ's lock may be waiting for it.
     */
    void readForPost() {
        if (reader == null) {
            return;
        }
        reader.lock();
        try {
            pollOwnCq();
        } finally {
            reader.unlock();
        }
    }

    /** Reads the CQ until it is empty (before an EP flushes what is left). */
    void drainCq() {
        if (reader == null) {
            return;
        }
        reader.lock();
        try {
            // pollCq's tryLock succeeds: the lock is reentrant.
            while (pollCq() > 0) {
                // more
            }
        } finally {
            reader.unlock();
        }
    }

    /** A consumer's poll: its thread reads the CQ, the progress thread leaves it alone meanwhile. */
    private void polled() {
        if (cq != 0) {
            pollMark.polled();
        }
    }

    private void progress() {
        if (cq != 0) {
            pollCq();
            ia.held.pump();
        }
        if (flags.contains(EvdFlag.CONNECTION) || flags.contains(EvdFlag.CR) || async) {
            ia.progress.pollEq();
        }
    }

    @Override
    public EvdParam query() {
        live();
        return new EvdParam(ia, qlen, enabled, waitable, cno, flags);
    }

    @Override
    public void free() {
        live();
        if (async) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_ASYNC, "the async EVD is the IA's");
        }
        if (users.get() > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE, "an EP or service point uses the EVD");
        }
        destroy();
        ia.removed(this);
    }

    @Override
    void destroy() {
        synchronized (this) {
            if (freed) {
                return;
            }
            freed = true;
            queue.clear();
            notifyAll();
        }
        if (cno != null) {
            cno.users.decrementAndGet();
        }
        if (reader != null) {
            ia.progress.removeCq(this);
            reader.close(ia, null);
        }
    }

    @Override
    public synchronized void resize(int minQlen) {
        live();
        if (minQlen < 1 || minQlen > OfiIa.MAX_EVD_QLEN || (cq != 0 && minQlen > cqSize)) {
            throw DatException.invalidParameter(2, "EVD length " + minQlen + " out of range");
        }
        if (minQlen < reserved.get()) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                    reserved.get() + " events are queued or outstanding");
        }
        qlen = minQlen;
    }

    @Override
    public void postSoftwareEvent(Object pointer) {
        live();
        if (!flags.contains(EvdFlag.SOFTWARE)) {
            throw DatException.invalidParameter(1, "the EVD has no software event stream");
        }
        if (!reserve()) {
            throw new DatException(DatReturnType.QUEUE_FULL, "the EVD is full");
        }
        enqueueReserved(new DatEvent.Software(this, pointer));
    }

    @Override
    public Optional<DatEvent> dequeue() {
        live();
        polled();
        progress();
        synchronized (this) {
            DatEvent e = take();
            counted(e != null);
            return Optional.ofNullable(e);
        }
    }

    /** Counts a dequeue that found an event or not. Behaviours: EXT_09. */
    private void counted(boolean found) {
        counts.inc(EvdCounter.DEQUEUE);
        counts.inc(found ? EvdCounter.DEQUEUE_FOUND : EvdCounter.DEQUEUE_NOT_FOUND);
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<EvdCounter> queryCounters(boolean reset) {
        live();
        return OfiCounts.query(EvdCounter.class, reset, java.util.List.of(counts));
    }

    /** dat_evd_dequeue into a caller's slot: a DTO completion is written field by field. */
    @Override
    public boolean dequeue(EventSlot slot) {
        if (slot == null) {
            throw DatException.invalidParameter(2, "no event slot to fill");
        }
        live();
        polled();
        progress();
        synchronized (this) {
            if (queue.poll(this, slot)) {
                reserved.decrementAndGet();
                counted(true);
                return true;
            }
            counted(false);
            return false;
        }
    }

    private DatEvent take() {
        DatEvent e = queue.poll(this);
        if (e != null) {
            reserved.decrementAndGet();
        }
        return e;
    }

    @Override
    public DatEvent waitEvent(long timeoutMicros, int threshold) {
        return waitFor(timeoutMicros, threshold, null);
    }

    /** dat_evd_wait into a caller's slot: a DTO completion is written field by field. */
    @Override
    public void waitEvent(long timeoutMicros, int threshold, EventSlot slot) {
        if (slot == null) {
            throw DatException.invalidParameter(4, "no event slot to fill");
        }
        waitFor(timeoutMicros, threshold, slot);
    }

    /**
     * dat_evd_wait: progress in the caller's thread, then a monitor wait in slices of at most a second
     * (a virtual thread unmounts in it); the EVD's free or the IA's close wakes the waiter, which
     * leaves with INVALID_HANDLE or ABORT. Behaviours: OBJ_11.
     */
    private DatEvent waitFor(long timeoutMicros, int threshold, EventSlot slot) {
        live();
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout");
        }
        if (threshold < 1 || threshold > qlen) {
            throw DatException.invalidParameter(3, "threshold " + threshold + " is not within 1.." + qlen);
        }
        long deadline = timeoutMicros >= Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : System.nanoTime() + timeoutMicros * 1000;
        synchronized (this) {
            if (!waitable) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, "the EVD is unwaitable");
            }
            if (waiter != null) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER, "another thread waits");
            }
            waiter = Thread.currentThread();
        }
        pollMark.consumerSleeps(); // the waiter depends on the progress thread once it sleeps
        try {
            while (true) {
                progress();
                synchronized (this) {
                    if (freed) {
                        throw ia.closing ? new DatException(DatReturnType.ABORT, "the IA was closed")
                                : DatException.invalidHandle(DatReturnSubtype.NO_SUBTYPE, "the EVD was freed");
                    }
                    if (!waitable) {
                        throw new DatException(DatReturnType.INTERRUPTED_CALL, "the EVD became unwaitable");
                    }
                    if (queue.size() >= threshold) {
                        if (slot == null) {
                            return take();
                        }
                        queue.poll(this, slot);
                        reserved.decrementAndGet();
                        return null;
                    }
                    long left = deadline == Long.MAX_VALUE ? 1_000_000 : deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no event within " + timeoutMicros + " us");
                    }
                    long slice = Math.min(left, 1_000_000);
                    wait(slice / 1_000_000, (int) (slice % 1_000_000));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DatException(DatReturnType.INTERRUPTED_CALL, "interrupted");
        } finally {
            synchronized (this) {
                waiter = null;
            }
        }
    }

    @Override
    public int count() {
        live();
        progress();
        synchronized (this) {
            return queue.size();
        }
    }

    @Override
    public void enable() {
        live();
        enabled = true;
    }

    @Override
    public void disable() {
        live();
        enabled = false;
    }

    @Override
    public synchronized void setUnwaitable() {
        live();
        waitable = false;
        notifyAll();
    }

    @Override
    public void clearUnwaitable() {
        live();
        waitable = true;
    }

    @Override
    public void modifyCno(Cno newCno) {
        live();
        OfiCno c = newCno == null ? null : OfiCno.of(ia, newCno);
        if (c != null) {
            c.users.incrementAndGet();
        }
        OfiCno old = cno;
        cno = c;
        if (old != null) {
            old.users.decrementAndGet();
        }
    }
}
