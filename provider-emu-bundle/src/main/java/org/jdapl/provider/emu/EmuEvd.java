package org.jdapl.provider.emu;

import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;

/**
 * An emulated Event Dispatcher. Events are queued under the EVD's own lock, so waiting and dequeuing
 * never take the fabric lock. A waiter on the loopback fabric first spins briefly on the queue's size
 * ({@link #SPIN_NANOS}: an answer that comes within it costs no park and no wake-up), then blocks on a
 * condition; nothing spins while nobody waits. The spin adapts: once a spin ends empty-handed (the
 * answering thread had no CPU to run on, say), waiters park at once and only every
 * {@link #SPIN_PROBE}th wait spins again to see whether spinning pays once more. Several threads
 * may wait at once. A {@link #dequeue}
 * that finds the queue empty lets a fabric with an input of its own (tcp) read it at once, so a
 * polling consumer is served as promptly as a waiting one.
 * An event arriving when the queue already holds {@code qlen} events is still queued (none is lost),
 * and the overflow is reported once as ASYNC_ERROR_EVD_OVERFLOW on the IA's asynchronous EVD.
 */
final class EmuEvd extends EmuObject implements EventDispatcher {
    private final EmuIa ia;
    private final Set<EvdFlag> flags;
    private final ReentrantLock queueLock = new ReentrantLock();
    private final Condition changed = queueLock.newCondition();
    private final ArrayDeque<DatEvent> queue = new ArrayDeque<>();
    private int qlen;
    private boolean enabled = true;
    private boolean waitable = true;
    private boolean overflowed;
    /**
     * How long a waiter spins before it parks (system property {@code jdapl.emu.evd.spinMicros},
     * default 20 µs; 0 parks at once).
     */
    static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(
            Math.max(0, Long.getLong("jdapl.emu.evd.spinMicros", 20L)));
    /** While spinning does not pay, one wait in this many spins to find out whether it does again. */
    static final int SPIN_PROBE = 64;
    /** Whether the last spin saw an event arrive (guarded by the queue lock). */
    private boolean spinPays = true;
    /** Waits since spinning stopped paying (guarded by the queue lock). */
    private int waitsWithoutSpin;
    /** Threads in {@link #waitEvent} (written under the queue lock, read without it by dequeue). */
    private volatile int waiters;
    /** Threads parked on {@link #changed} (guarded by the queue lock). */
    private int parked;
    /** The queue's size, readable without the queue lock. */
    private volatile int size;
    /**
     * Events queued that wake waiters (signalled, EVD enabled), counted: what a spinning waiter watches,
     * so that an unsignalled completion wakes a spinner no more than a parked waiter (written under the
     * queue lock).
     */
    private volatile int signals;
    /** A waiting thread that polls the fabric itself (guarded by the queue lock). */
    private Thread pollingWaiter;
    // guarded by the fabric lock
    private EmuCno cno;
    private int users;

    EmuEvd(EmuIa ia, int qlen, EmuCno cno, Set<EvdFlag> flags) {
        super(HandleType.EVD);
        this.ia = ia;
        this.qlen = qlen;
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

    /**
     * Queues an event (fabric lock held). {@code notify} false queues it without waking anyone
     * (an unsignalled completion).
     *
     * @return true if the queue just went over its length, which the caller reports
     *
     * <p>Behaviours: OBJ_04: no event is dropped; the overflow is reported.
     */
    boolean enqueue(DatEvent event, boolean notify) {
        if (isFreed()) {
            return false;
        }
        queueLock.lock();
        try {
            queue.addLast(event);
            size = queue.size();
            boolean crossed = false;
            if (queue.size() > qlen && !overflowed) {
                overflowed = true;
                crossed = true;
            }
            if (notify && enabled) {
                signals++;
                if (waiters == 1 && pollingWaiter == Thread.currentThread()) {
                    // The only waiter is this thread, polling the fabric: it looks at the queue when its poll returns.
                } else if (waiters > 0 && parked == 0 && pollingWaiter == null) {
                    // Every waiter spins on the size and sees the event itself.
                } else if (waiters > 0) {
                    if (ia.domain().isHeldByCurrentThread()) {
                        Wakeups.defer(this);
                    } else {
                        changed.signalAll();
                        ia.fabric().wakePoller();
                    }
                } else if (cno != null) {
                    cno.trigger(this);
                }
            }
            return crossed;
        } finally {
            queueLock.unlock();
        }
    }

    /** Wakes the threads waiting on the EVD (a deferred notification, see {@link Wakeups}). */
    void wakeWaiters() {
        queueLock.lock();
        try {
            changed.signalAll();
        } finally {
            queueLock.unlock();
        }
        ia.fabric().wakePoller();
    }

    @Override
    public EvdParam query() {
        checkLive();
        return ia.locked(() -> {
            checkLive();
            queueLock.lock();
            try {
                return new EvdParam(ia, qlen, enabled, waitable, cno, flags);
            } finally {
                queueLock.unlock();
            }
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
            queueLock.lock();
            try {
                if (waiters > 0) {
                    throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                            "a thread waits on the EVD");
                }
            } finally {
                queueLock.unlock();
            }
            destroy();
            ia.forget(this);
        });
    }

    /** Frees the EVD whatever uses it (fabric lock held); waiting threads are released. */
    void destroy() {
        if (cno != null) {
            cno.detach();
            cno = null;
        }
        markFreed();
        queueLock.lock();
        try {
            changed.signalAll();
        } finally {
            queueLock.unlock();
        }
    }

    @Override
    public void resize(int minQlen) {
        ia.locked(() -> {
            checkLive();
            if (minQlen < 1 || minQlen > EmuLimits.MAX_EVD_QLEN) {
                throw DatException.invalidParameter(2, "EVD length " + minQlen + " is not in 1.."
                        + EmuLimits.MAX_EVD_QLEN);
            }
            queueLock.lock();
            try {
                if (queue.size() > minQlen) {
                    throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                            queue.size() + " events are queued, more than the new length " + minQlen);
                }
                qlen = minQlen;
                overflowed = false;
            } finally {
                queueLock.unlock();
            }
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
            queueLock.lock();
            try {
                if (queue.size() >= qlen) {
                    throw new DatException(DatReturnType.QUEUE_FULL, "the EVD holds " + qlen + " events");
                }
            } finally {
                queueLock.unlock();
            }
            enqueue(new DatEvent.Software(this, pointer), true);
        });
    }

    @Override
    public Optional<DatEvent> dequeue() {
        checkLive();
        if (size == 0) {
            if (waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                        "a thread waits on the EVD");
            }
            ia.fabric().pollNow();
            if (size == 0) {
                return Optional.empty();
            }
        }
        queueLock.lock();
        try {
            checkLive();
            if (waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                        "a thread waits on the EVD");
            }
            return Optional.ofNullable(take());
        } finally {
            queueLock.unlock();
        }
    }

    private DatEvent take() {
        DatEvent event = queue.pollFirst();
        size = queue.size();
        if (queue.size() <= qlen) {
            overflowed = false;
        }
        return event;
    }

    private boolean ready(int threshold) {
        if (queue.isEmpty()) {
            return false;
        }
        if (queue.size() >= threshold) {
            return true;
        }
        for (DatEvent e : queue) {
            if (!(e instanceof DatEvent.DtoCompletion)) {
                return true;
            }
        }
        return false;
    }

    /** Behaviours: OBJ_03: TIMEOUT_EXPIRED after the timeout. */
    @Override
    public DatEvent waitEvent(long timeoutMicros, int threshold) {
        checkLive();
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout " + timeoutMicros);
        }
        queueLock.lock();
        try {
            checkLive();
            if (threshold < 1 || threshold > qlen) {
                throw DatException.invalidParameter(3, "threshold " + threshold + " is not in 1.." + qlen);
            }
            if (!waitable) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, "the EVD is unwaitable");
            }
            boolean infinite = timeoutMicros >= Dat.TIMEOUT_INFINITE;
            long remaining = infinite ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
            waiters++;
            boolean spun = SPIN_NANOS == 0 || !(spinPays || ++waitsWithoutSpin % SPIN_PROBE == 0);
            try {
                while (true) {
                    if (ready(threshold)) {
                        return take();
                    }
                    if (isFreed()) {
                        throw new DatException(DatReturnType.ABORT, "the EVD was freed while waiting (IA closed)");
                    }
                    if (!waitable) {
                        throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE,
                                "the EVD became unwaitable");
                    }
                    if (!infinite && remaining <= 0) {
                        throw new DatException(DatReturnType.TIMEOUT_EXPIRED,
                                "no event within " + timeoutMicros + " us");
                    }
                    long before = infinite ? 0 : System.nanoTime();
                    Fabric fabric = ia.fabric();
                    if (!spun && !fabric.canPoll()) {
                        spun = true;
                        spinPays = spinForEvent(infinite ? SPIN_NANOS : Math.min(SPIN_NANOS, remaining));
                        if (!infinite) {
                            long now = System.nanoTime();
                            remaining -= now - before;
                        }
                        continue;
                    }
                    if (enabled && fabric.canPoll()) {
                        fabric.announcePoll();
                        Thread self = Thread.currentThread();
                        pollingWaiter = self;
                        queueLock.unlock();
                        boolean polled;
                        try {
                            polled = fabric.pollWhileWaiting(infinite ? Long.MAX_VALUE : remaining);
                        } finally {
                            queueLock.lock();
                            if (pollingWaiter == self) {
                                pollingWaiter = null;
                            }
                        }
                        if (Thread.interrupted()) {
                            throw new InterruptedException();
                        }
                        if (!infinite) {
                            long now = System.nanoTime();
                            remaining -= now - before;
                            before = now;
                        }
                        if (polled || ready(threshold) || isFreed() || !waitable) {
                            continue;
                        }
                    }
                    parked++;
                    try {
                        if (infinite) {
                            changed.await();
                        } else {
                            changed.awaitNanos(remaining);
                        }
                    } finally {
                        parked--;
                    }
                    if (!infinite) {
                        remaining -= System.nanoTime() - before;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DatException(DatReturnType.INTERRUPTED_CALL, DatReturnSubtype.SUB_INTERRUPTED,
                        "interrupted while waiting on the EVD", e);
            } finally {
                waiters--;
            }
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * Spins up to {@code nanos} without the queue lock until an event is queued or the EVD changes
     * (queue lock held on entry and on return).
     *
     * @return whether an event arrived while spinning
     */
    private boolean spinForEvent(long nanos) {
        int seen = signals;
        queueLock.unlock();
        try {
            long end = System.nanoTime() + nanos;
            while (signals == seen && !isFreed() && System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
            return signals != seen;
        } finally {
            queueLock.lock();
        }
    }

    @Override
    public int count() {
        checkLive();
        queueLock.lock();
        try {
            return queue.size();
        } finally {
            queueLock.unlock();
        }
    }

    @Override
    public void enable() {
        setEnabled(true);
    }

    @Override
    public void disable() {
        setEnabled(false);
    }

    private void setEnabled(boolean on) {
        checkLive();
        queueLock.lock();
        try {
            checkLive();
            enabled = on;
            if (on) {
                signals++;
                changed.signalAll();
            }
        } finally {
            queueLock.unlock();
        }
    }

    @Override
    public void setUnwaitable() {
        setWaitable(false);
    }

    @Override
    public void clearUnwaitable() {
        setWaitable(true);
    }

    private void setWaitable(boolean on) {
        checkLive();
        queueLock.lock();
        try {
            checkLive();
            waitable = on;
            signals++;
            changed.signalAll();
        } finally {
            queueLock.unlock();
        }
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
