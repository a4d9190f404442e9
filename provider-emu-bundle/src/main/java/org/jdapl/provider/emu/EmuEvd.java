package org.jdapl.provider.emu;

import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.jdapl.provider.emu.evd.EventQueue;
import org.jdapl.provider.emu.evd.QueueOwner;

import org.jdapl.dat.Cno;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;

/**
 * An emulated Event Dispatcher: the DAT object (its streams, its CNO, the objects that deliver to it,
 * free and resize) over an {@link EventQueue}, which holds the events and the threads waiting for them
 * under the EVD's own lock, so waiting and dequeuing never take the IA's domain lock.
 */
public final class EmuEvd extends EmuObject implements QueueOwner {
    private final EmuIa ia;
    private final Set<EvdFlag> flags;
    private final EventQueue events;
    // guarded by the domain lock
    private volatile EmuCno cno;
    private int users;
    /** The counters of the threads queuing events (DTO_CALLBACK, CONN_CALLBACK). */
    private final Counts producerCounts = new Counts(IaCounts.EVD_COUNTERS);
    /** The counters of the threads taking them (DEQUEUE*, WAIT). */
    private final Counts counts = new Counts(IaCounts.EVD_COUNTERS);

    EmuEvd(EmuIa ia, int qlen, EmuCno cno, Set<EvdFlag> flags) {
        super(HandleType.EVD);
        this.ia = ia;
        this.events = new EventQueue(this, ia.fabric(), ia.domain(), qlen);
        this.cno = cno;
        this.flags = Set.copyOf(EnumSet.copyOf(flags));
        if (cno != null) {
            cno.attach();
        }
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    boolean accepts(EvdFlag stream) {
        return flags.contains(stream);
    }

    /** Counts an EP, service point or IA that delivers events here (fabric lock held). */
    void use() {
        users++;
    }

    void unuse() {
        users--;
    }

    /** An EP's EVDs change from {@code before} to {@code after} (nulls for none): each is used or let go. */
    static void changeUses(EmuEvd[] before, EmuEvd[] after) {
        for (EmuEvd e : before) {
            if (e != null) {
                e.unuse();
            }
        }
        for (EmuEvd e : after) {
            if (e != null) {
                e.use();
            }
        }
    }

    /**
     * Queues an event (domain lock held; see {@link EventQueue#enqueue}). {@code notify} false queues
     * it without waking anyone (an unsignalled completion). Nothing is queued on a freed EVD.
     *
     * @return true if the queue just went over its length, which the caller reports (OBJ_04)
     */
    boolean enqueue(DatEvent event, boolean notify) {
        if (event instanceof DatEvent.ExtendedDtoCompletion) {
            producerCounts.inc(EvdCounter.DTO_CALLBACK.ordinal());
        } else if (event instanceof DatEvent.Connection || event instanceof DatEvent.UdConnection) {
            producerCounts.inc(EvdCounter.CONN_CALLBACK.ordinal());
        }
        return !isFreed() && events.enqueue(event, notify);
    }

    /** The EVD's counters of the queuing side. */
    Counts producerCounts() {
        return producerCounts;
    }

    /** The EVD's counters of the taking side. */
    Counts consumerCounts() {
        return counts;
    }

    /** Counts a dequeue that found an event or not. */
    private boolean dequeued(boolean found) {
        counts.inc(EvdCounter.DEQUEUE.ordinal());
        counts.inc(found ? EvdCounter.DEQUEUE_FOUND.ordinal() : EvdCounter.DEQUEUE_NOT_FOUND.ordinal());
        return found;
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<EvdCounter> queryCounters(boolean reset) {
        checkLive();
        return Counts.query(EvdCounter.class, reset, producerCounts, counts);
    }

    /** Queues a DTO completion of {@code ep} ({@link EventQueue#enqueueDto}); otherwise as {@link #enqueue}. */
    boolean enqueueDto(Endpoint ep, long cookie, DtoStatus status, long length, DtoOperation op, int rmrContext,
                       boolean notify) {
        producerCounts.inc(EvdCounter.DTO_CALLBACK.ordinal());
        return !isFreed() && events.enqueueDto(ep, cookie, status, length, op, rmrContext, notify);
    }

    /** A signalled event arrived and nobody waits: the CNO, if any, is triggered (domain lock held). */
    public void triggerCno() {
        if (cno != null) {
            cno.trigger(this);
        }
    }

    /** Wakes the threads waiting on the EVD (a deferred notification, see {@link org.jdapl.provider.emu.evd.Wakeups}). */
    public void wakeWaiters() {
        events.wakeWaiters();
    }

    /** The EVD's length now, read without a lock (for the overflow report, see {@link EmuIa#overflowed}). */
    int qlen() {
        return events.qlen();
    }

    @Override
    public EvdParam query() {
        checkLive();
        return ia.locked(() -> {
            checkLive();
            return events.param(ia, cno, flags);
        });
    }

    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            if (users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                        "the EVD is used by " + users + " EP(s), service point(s) or the IA");
            }
            events.checkNoWaiter();
            destroy();
            ia.forget(this);
        });
    }

    /** Whether a thread waits on the EVD. */
    boolean hasWaiters() {
        return events.hasWaiters();
    }

    /** Frees the EVD whatever uses it (fabric lock held); waiting threads are released. */
    void destroy() {
        if (cno != null) {
            cno.detach();
            cno = null;
        }
        markFreed();
        events.releaseWaiters();
    }

    @Override
    public void resize(int minQlen) {
        ia.locked(() -> {
            checkLive();
            EmuLimits.checkEvdQlen(minQlen, "EVD");
            events.resize(minQlen);
        });
    }

    /** Behaviours: OBJ_09. */
    @Override
    public void postSoftwareEvent(Object pointer) {
        ia.locked(() -> {
            checkLive();
            if (!flags.contains(EvdFlag.SOFTWARE)) {
                throw DatException.invalidParameter(1, "the EVD was not created with the SOFTWARE stream");
            }
            events.checkRoom();
            enqueue(new DatEvent.Software(this, pointer), true);
        });
    }

    @Override
    public Optional<DatEvent> dequeue() {
        Optional<DatEvent> e = events.dequeue();
        dequeued(e.isPresent());
        return e;
    }

    /** Behaviours: OBJ_03: TIMEOUT_EXPIRED after the timeout. */
    @Override
    public DatEvent waitEvent(long timeoutMicros, int threshold) {
        counts.inc(EvdCounter.WAIT.ordinal());
        return events.waitEvent(timeoutMicros, threshold);
    }

    /**
     * {@code dat_evd_dequeue} into the caller's event: a DTO completion is written into the slot field
     * by field, nothing allocated. Behaviours: OBJ_07, OBJ_08.
     */
    @Override
    public boolean dequeue(EventSlot slot) {
        if (slot == null) {
            throw DatException.invalidParameter(2, "no event slot to fill");
        }
        return dequeued(events.dequeue(slot));
    }

    /** {@code dat_evd_wait} into the caller's event, as {@link #dequeue(EventSlot)}. Behaviours: OBJ_03. */
    @Override
    public void waitEvent(long timeoutMicros, int threshold, EventSlot slot) {
        if (slot == null) {
            throw DatException.invalidParameter(4, "no event slot to fill");
        }
        counts.inc(EvdCounter.WAIT.ordinal());
        events.waitEvent(timeoutMicros, threshold, slot);
    }

    @Override
    public int count() {
        return events.count();
    }

    @Override
    public void enable() {
        events.setEnabled(true);
    }

    @Override
    public void disable() {
        events.setEnabled(false);
    }

    @Override
    public void setUnwaitable() {
        events.setWaitable(false);
    }

    @Override
    public void clearUnwaitable() {
        events.setWaitable(true);
    }

    @Override
    public void modifyCno(Cno newCno) {
        ia.locked(() -> {
            checkLive();
            EmuCno target = newCno == null ? null
                    : ia.own(newCno, EmuCno.class, HandleType.CNO);
            if (cno != null) {
                cno.detach();
            }
            cno = target;
            if (target != null) {
                target.attach();
            }
        });
    }

    /**
     * Checks that the EVDs of an EP carry the streams their roles need.
     *
     * @throws DatException INVALID_HANDLE with the subtype of the role
     */
    static void checkStreams(EmuEvd recv, EmuEvd request, EmuEvd connect) {
        if (recv != null && !recv.accepts(EvdFlag.DTO)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EVD_RECV, "the receive EVD lacks the DTO stream");
        }
        if (request != null && !request.accepts(EvdFlag.DTO) && !request.accepts(EvdFlag.RMR_BIND)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST,
                    "the request EVD lacks the DTO stream");
        }
        if (connect != null && !connect.accepts(EvdFlag.CONNECTION)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EVD_CONN,
                    "the connect EVD lacks the CONNECTION stream");
        }
    }
}
