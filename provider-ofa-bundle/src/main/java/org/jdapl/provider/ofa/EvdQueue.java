package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.EvdFlag;

/**
 * An EVD's queue of events and the threads that wait on it: its length, its enabled and waitable
 * states, its CNO, the blocking wait of {@code dat_evd_wait} (a {@link Condition}, so that a virtual
 * thread leaves its carrier) and the one parked slot waiter (a wait into a slot). Every field is guarded
 * by {@link #lock}, the EVD's queue lock; {@link #busy} is also read without it. The lock protocol
 * that this queue, the CQ's polls and the hand-off of polled events share is described once, in the EVD's class
 * comment.
 *
 * <p>Behaviours: OBJ_03, OBJ_04, OBJ_11.
 */
final class EvdQueue {
    private static final VarHandle BUSY = VarHandles.field(MethodHandles.lookup(), "busy", int.class);

    /** The EVD as its CNO sees it. */
    private final EventDispatcher evd;
    /** The CQ the waits poll and arm (one without a CQ polls nothing). */
    private final EvdCq cq;
    private final Counts counts;
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
    private boolean freed;
    private OfaCno cno;
    /**
     * The thread of a wait into a slot parked for the CQ (null: none): woken with
     * {@code LockSupport.unpark} by the CQ's event (the event thread leaves the poll to it) and by
     * whatever signals waiters. Written under {@link #lock}.
     */
    private volatile Thread slotWaiter;

    EvdQueue(EventDispatcher evd, EvdCq cq, Counts counts, int qlen, OfaCno cno) {
        this.evd = evd;
        this.cq = cq;
        this.counts = counts;
        this.qlen = qlen;
        this.cno = cno;
    }

    /** {@code dat_evd_query}'s view of the queue. */
    EventDispatcher.EvdParam param(InterfaceAdapter ia, Set<EvdFlag> flags) {
        lock.lock();
        try {
            return new EventDispatcher.EvdParam(ia, qlen, enabled, waitable, cno, flags);
        } finally {
            lock.unlock();
        }
    }

    /** The CNO, if any (a volatile-free read: the event thread's hint only). */
    boolean hasCno() {
        return cno != null;
    }

    /** Whether the EVD is waitable (a plain read: a wait checks again under the lock). */
    boolean waitable() {
        return waitable;
    }

    /** The parked slot waiter, if any. */
    Thread slotWaiter() {
        return slotWaiter;
    }

    /** Checks that nothing waits (free and IA close, before the CQ is destroyed). */
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

    /** Empties the queue, releases the waiters (ABORT) and detaches the CNO: the EVD is freed. */
    void close() {
        lock.lock();
        try {
            freed = true;
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

    /** {@code dat_evd_resize}: not below what is queued; {@code cqResize} runs under the queue lock. */
    void resize(int minQlen, Runnable cqResize) {
        lock.lock();
        try {
            if (queue.size() > minQlen) {
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        queue.size() + " events are queued, more than the new length " + minQlen);
            }
            cqResize.run();
            qlen = minQlen;
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_evd_post_se}: QUEUE_FULL on a full queue. */
    void post(DatEvent event) {
        lock.lock();
        try {
            if (queue.size() >= qlen) {
                throw new DatException(DatReturnType.QUEUE_FULL, "EVD queue is full (" + qlen + " events)");
            }
            add(event);
        } finally {
            lock.unlock();
        }
    }

    /** Queues a provider's event; true if the queue was full (an overflow: the event is kept). */
    boolean offer(DatEvent event) {
        lock.lock();
        try {
            boolean overflow = queue.size() >= qlen;
            add(event);
            return overflow;
        } finally {
            lock.unlock();
        }
    }

    private void add(DatEvent event) {
        queue.addLast(event);
        updateBusy();
        if (enabled) {
            changed.signalAll();
            wakeSlotWaiter();
            if (waiters == 0 && cno != null) {
                cno.trigger(evd);
            }
        }
    }

    private void updateBusy() {
        BUSY.setRelease(this, queue.size() + waiters);
    }

    /** Queued events plus waiting threads (a volatile read, no lock). */
    int busy() {
        return (int) BUSY.getAcquire(this);
    }

    /** Whether nothing is queued and nobody waits (a volatile read, no lock). */
    boolean idle() {
        return busy() == 0;
    }

    /** {@code dat_evd_dequeue} of a queued event (or of a waiter's EVD: an error). */
    Optional<DatEvent> dequeue() {
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

    /**
     * Makes this thread the EVD's parked slot waiter, with the checks of a wait (ABORT once freed,
     * INVALID_STATE_EVD_UNWAITABLE); false (nothing changed) if an event is queued or another thread
     * waits: the caller then waits as {@link #await} does.
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
        if (freed) {
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

    /**
     * {@code dat_evd_wait}: polls the CQ, and blocks (the CQ armed first, outside the queue lock)
     * until {@code threshold} events are queued, or a first event that is not a DTO completion.
     */
    DatEvent await(long timeoutMicros, int threshold) {
        counts.inc(EvdCounter.WAIT);
        boolean blocked = false;
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout " + timeoutMicros);
        }
        long deadline = timeoutMicros >= Dat.TIMEOUT_INFINITE ? Long.MAX_VALUE
                : System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
        boolean armed = false;
        while (true) {
            cq.poll();
            lock.lock();
            try {
                if (threshold < 1 || threshold > qlen) {
                    throw DatException.invalidParameter(3, "threshold " + threshold + " is outside 1.." + qlen);
                }
                checkWaitable();
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
            cq.armAndPoll();
            armed = true;
        }
    }

    /** At least {@code threshold} events, or a first event that is not a DTO completion. */
    private boolean satisfied(int threshold) {
        DatEvent head = queue.peekFirst();
        return head != null && (queue.size() >= threshold || head.number() != EventNumber.DTO_COMPLETION);
    }

    /** {@code dat_evd_query}'s count of queued events. */
    int size() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_evd_enable} (true) or {@code dat_evd_disable}. */
    void setEnabled(boolean on) {
        lock.lock();
        try {
            enabled = on;
            if (on && !queue.isEmpty()) {
                changed.signalAll();
                wakeSlotWaiter();
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_evd_clear_unwaitable} (true) or {@code dat_evd_set_unwaitable}, which releases the waiters. */
    void setWaitable(boolean on) {
        lock.lock();
        try {
            waitable = on;
            if (!on) {
                changed.signalAll();
                wakeSlotWaiter();
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_evd_modify_cno}: the old CNO detached, the new one (may be null) attached. */
    void setCno(OfaCno c) {
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
}
