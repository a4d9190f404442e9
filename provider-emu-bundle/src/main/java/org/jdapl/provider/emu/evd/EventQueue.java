package org.jdapl.provider.emu.evd;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jdapl.provider.emu.LockDomain;

import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.InterfaceAdapter;

/**
 * The events of one EVD and the threads that wait for them. The events are an {@link EventRing}:
 * producers (which claim its producer side) append and consumers take without a lock; the EVD's own
 * queue lock orders the waiters, and a producer takes it only when threads wait. So a completion and
 * its polling consumer share no lock, and waiting and dequeuing never take the domain lock. A waiter on
 * the loopback fabric first spins briefly on a count of signalled events ({@link #SPIN_NANOS}: an
 * answer that comes within it costs no park and no wake-up), then parks; nothing spins
 * while nobody waits. The spin adapts: once a spin ends empty-handed (the answering thread had no CPU
 * to run on, say), waiters park at once and only every {@link #SPIN_PROBE}th wait spins again to see
 * whether spinning pays once more. Several threads may wait at once. A {@link #dequeue} that finds the
 * queue empty lets a fabric with an input of its own (tcp) read it at once, and, once the consumer has
 * polled a while (or at once while large frames come), blocks briefly in that input ({@link PollSpin}),
 * so a polling consumer is served as promptly as a waiting one, on a loaded machine too. An event
 * arriving when the queue already holds {@code qlen} events is still queued (none is lost), and the
 * overflow is reported once by the caller.
 *
 * <p>Over 500 lines: the rules by which a waiter and a producer see each other (the waiter count read
 * under the producer claim, the signal count, the spin, the park and its wake-up after the lock is
 * released, the polling waiter of a tcp IA) hold only together, and are kept in one class to be read
 * as one; the ring itself is {@link EventRing}, the parked threads {@link ParkedWaiters}, the polling
 * spin {@link PollSpin}.
 */
public final class EventQueue {
    private final QueueOwner evd;
    private final FabricInput fabric;
    private final LockDomain domain;
    private final ReentrantLock queueLock = new ReentrantLock();
    private final EventRing ring;
    /** Whether an event is queued (what ends a consumer's brief block in the fabric's input). */
    private final BooleanSupplier queued = () -> !isEmptyNow();
    /** Whether queued events wake waiters (read by producers without the queue lock). */
    private volatile boolean enabled = true;
    private boolean waitable = true;
    /**
     * How long a waiter spins before it parks (system property {@code jdapl.emu.evd.spinMicros},
     * default 20 µs; 0 parks at once).
     */
    static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(
            Math.max(0, Long.getLong("jdapl.emu.evd.spinMicros", 20L)));
    /** The longest such a dequeue blocks (a consumer that polls other EVDs too gets back to them). */
    static final long POLL_BLOCK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** While spinning does not pay, one wait in this many spins to find out whether it does again. */
    static final int SPIN_PROBE = 64;
    /** Whether the last spin saw an event arrive (guarded by the queue lock). */
    private boolean spinPays = true;
    /** Waits since spinning stopped paying (guarded by the queue lock). */
    private int waitsWithoutSpin;
    /** Threads in {@link #waitEvent} (written under the queue lock, read without it by dequeue). */
    private volatile int waiters;
    /** Threads parked in {@link #park} (guarded by the queue lock). */
    private final ParkedWaiters parked = new ParkedWaiters();
    /**
     * Events queued that wake waiters (signalled, EVD enabled), counted: what a spinning waiter watches,
     * so that an unsignalled completion wakes a spinner no more than a parked waiter (written under the
     * queue lock).
     */
    private volatile int signals;
    /**
     * When dequeues began to find the queue empty (0: the last one did not), on a fabric that polls;
     * written only by consumers of such a fabric, and only when it changes.
     */
    private long emptySince;
    /** On such a fabric, how long a polling consumer reads the input before it blocks in it. */
    private final PollSpin pollSpin = new PollSpin();
    /** A waiting thread that polls the fabric itself (guarded by the queue lock). */
    private Thread pollingWaiter;

    /** The queue of {@code evd}, of an IA on {@code fabric} whose lock domain is {@code domain}. */
    public EventQueue(QueueOwner evd, FabricInput fabric, LockDomain domain, int qlen) {
        this.evd = evd;
        this.fabric = fabric;
        this.domain = domain;
        this.ring = new EventRing(qlen, evd);
    }

    /**
     * Queues an event (the EVD live; under the domain lock, or a loopback send's
     * {@link org.jdapl.provider.emu.SendLock}: the ring orders its producers). {@code notify} false
     * queues it without waking anyone (an unsignalled completion).
     *
     * @return true if the queue just went over its length, which the caller reports
     *
     * <p>Behaviours: OBJ_04: no event is dropped; the overflow is reported.
     */
    public boolean enqueue(DatEvent event, boolean notify) {
        boolean crossed;
        int waiting;
        ring.claimProducer();
        try {
            crossed = ring.append(event);
            waiting = waiters;
        } finally {
            ring.releaseProducer();
        }
        return queued(crossed, waiting, notify);
    }

    /**
     * Queues a DTO completion of {@code ep} as its values, made into its event by the consumer that
     * takes it ({@link EventRing#appendDto}); otherwise as {@link #enqueue}.
     */
    public boolean enqueueDto(Endpoint ep, long cookie, DtoStatus status, long length, DtoOperation op, int rmrContext,
                       boolean notify) {
        boolean crossed;
        int waiting;
        ring.claimProducer();
        try {
            crossed = ring.appendDto(ep, cookie, status, length, op, rmrContext);
            waiting = waiters;
        } finally {
            ring.releaseProducer();
        }
        return queued(crossed, waiting, notify);
    }

    /** After an event was queued: wakes whoever is to know (the waiter count read under the claim). */
    private boolean queued(boolean crossed, int waiting, boolean notify) {
        if (notify && enabled) {
            if (waiting == 0) {
                // Nobody waits (a poller, or nobody yet): no lock; a waiter arriving now sees the event,
                // and a poller blocked briefly in the fabric's input (pollBriefly) is woken.
                evd.triggerCno();
                fabric.wakePoller();
            } else {
                notifyWaiters();
            }
        }
        return crossed;
    }

    /**
     * A signalled event was published and threads wait: they are told under the queue lock. The
     * waiter count is read under the ring's producer claim, and a waiter counts itself, then claims and
     * releases that side ({@link EventRing#syncWithProducers}) before it looks at the queue, so either
     * the waiter sees the event or the producer sees the waiter.
     */
    private void notifyWaiters() {
        Thread wake = null;
        LockDomain.lockSpinning(queueLock);
        try {
            signals++;
            if (waiters == 1 && pollingWaiter == Thread.currentThread()) {
                // The only waiter is this thread, polling the fabric: it looks at the queue when its poll returns.
            } else if (waiters > 0 && parked.count() == 0 && pollingWaiter == null) {
                // Every waiter spins on the signal count and sees the event itself.
            } else if (waiters > 0) {
                if (domain.isHeldByCurrentThread()) {
                    Wakeups.defer(this);
                } else {
                    wake = unparkAllButSole();
                    fabric.wakePoller();
                }
            } else {
                evd.triggerCno();
            }
        } finally {
            queueLock.unlock();
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
    }

    /** Wakes the threads waiting on the EVD (a deferred notification, see {@link Wakeups}). */
    public void wakeWaiters() {
        Thread wake;
        LockDomain.lockSpinning(queueLock);
        try {
            wake = unparkAllButSole();
        } finally {
            queueLock.unlock();
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
        fabric.wakePoller();
    }

    /**
     * Unparks the parked waiters (queue lock held), unless one alone is parked: that one is returned for
     * the caller to unpark once it released the lock ({@link ParkedWaiters#sole}). A waiter that left
     * meanwhile keeps a permit, which its loop sees as a wake-up that changed nothing.
     */
    private Thread unparkAllButSole() {
        Thread sole = parked.sole();
        if (sole == null) {
            parked.unparkAll();
        }
        return sole;
    }

    /** The queue's length, read without a lock (a value of the moment while a resize runs). */
    public int qlen() {
        return ring.qlen();
    }

    /** The EVD's parameters, read at once under the queue lock. */
    public EventDispatcher.EvdParam param(InterfaceAdapter ia, Cno cno, Set<EvdFlag> flags) {
        queueLock.lock();
        try {
            return new EventDispatcher.EvdParam(ia, ring.qlen(), enabled, waitable, cno, flags);
        } finally {
            queueLock.unlock();
        }
    }

    /** Fails INVALID_STATE_EVD_WAITER while a thread waits (dat_evd_free). */
    public void checkNoWaiter() {
        queueLock.lock();
        try {
            if (waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                        "a thread waits on the EVD");
            }
        } finally {
            queueLock.unlock();
        }
    }

    /** Whether a thread is in {@link #waitEvent} (read without the lock). */
    public boolean hasWaiters() {
        return waiters > 0;
    }

    /** Releases every waiting thread (the EVD was freed: they fail ABORT). */
    public void releaseWaiters() {
        queueLock.lock();
        try {
            parked.unparkAll();
        } finally {
            queueLock.unlock();
        }
    }

    /** A new length; fails INVALID_STATE if more events are queued. */
    public void resize(int minQlen) {
        queueLock.lock();
        try {
            int queued = ring.size();
            if (queued > minQlen) {
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        queued + " events are queued, more than the new length " + minQlen);
            }
            ring.resize(minQlen);
        } finally {
            queueLock.unlock();
        }
    }

    /** Fails QUEUE_FULL if the queue holds its length of events (a software event is refused, OBJ_09). */
    public void checkRoom() {
        queueLock.lock();
        try {
            if (ring.size() >= ring.qlen()) {
                throw new DatException(DatReturnType.QUEUE_FULL, "the EVD holds " + ring.qlen() + " events");
            }
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * {@code dat_evd_dequeue}: an empty queue is seen by one read of its head slot, with no lock;
     * an event is taken by one compare-and-set of the ring's head ({@link EventRing#poll}), no lock either.
     */
    public Optional<DatEvent> dequeue() {
        return readyToTake() ? Optional.ofNullable(ring.poll()) : Optional.empty();
    }

    /**
     * {@code dat_evd_dequeue} into the caller's {@code slot}: as {@link #dequeue()}, a DTO completion
     * written into the slot field by field, so that nothing is allocated.
     */
    public boolean dequeue(EventSlot slot) {
        return readyToTake() && ring.poll(slot);
    }

    /**
     * The checks and input polling of a dequeue: false if the queue is empty (after reading the
     * fabric's input once), true if an event may be taken.
     */
    private boolean readyToTake() {
        evd.checkLive();
        if (ring.isEmpty()) {
            if (waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                        "a thread waits on the EVD");
            }
            if (fabric.canPoll()) {
                pollInput(fabric);
            } else {
                fabric.pollNow();
            }
            if (ring.isEmpty()) {
                return false;
            }
        }
        if (emptySince != 0) {
            pollSpin.episodeEnded(System.nanoTime() - emptySince);
            emptySince = 0;
        }
        if (waiters > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER,
                    "a thread waits on the EVD");
        }
        return true;
    }

    private boolean isEmptyNow() {
        return ring.isEmpty();
    }

    /**
     * An empty dequeue on a fabric with input of its own: while the consumer has polled for less than
     * its spin ({@link PollSpin}: 10 µs, longer while answers take longer), the input is read without
     * blocking; past that, or at once while the input is large frames ({@link FabricInput#largeInput}), the
     * dequeue blocks in the input briefly, as a waiter would. Consumers race on {@code emptySince}
     * harmlessly.
     */
    private void pollInput(FabricInput fabric) {
        long now = System.nanoTime();
        if (emptySince == 0) {
            emptySince = now;
        }
        if (now - emptySince < pollSpin.spinNanos() && !fabric.largeInput()) {
            fabric.pollNow();
        } else {
            fabric.pollBriefly(POLL_BLOCK_NANOS, queued);
        }
    }

    /** Behaviours: OBJ_03: TIMEOUT_EXPIRED after the timeout. */
    public DatEvent waitEvent(long timeoutMicros, int threshold) {
        return (DatEvent) await(timeoutMicros, threshold, null);
    }

    /**
     * {@code dat_evd_wait} into the caller's {@code slot}: a wait that finds its event (or spins or
     * polls the fabric until it comes) allocates nothing, and neither does one that parks
     * ({@link #park}). Behaviours: OBJ_03.
     */
    public void waitEvent(long timeoutMicros, int threshold, EventSlot slot) {
        await(timeoutMicros, threshold, slot);
    }

    /** The wait: the event taken into {@code slot} (returned) or, without one, as a {@link DatEvent}. */
    private Object await(long timeoutMicros, int threshold, EventSlot slot) {
        evd.checkLive();
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout " + timeoutMicros);
        }
        LockDomain.lockSpinning(queueLock);
        try {
            evd.checkLive();
            if (threshold < 1 || threshold > ring.qlen()) {
                throw DatException.invalidParameter(3, "threshold " + threshold + " is not in 1.." + ring.qlen());
            }
            if (!waitable) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, "the EVD is unwaitable");
            }
            boolean infinite = timeoutMicros >= Dat.TIMEOUT_INFINITE;
            long remaining = infinite ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
            waiters++;
            ring.syncWithProducers();
            boolean spun = SPIN_NANOS == 0 || !(spinPays || ++waitsWithoutSpin % SPIN_PROBE == 0);
            try {
                while (true) {
                    if (ring.ready(threshold)) {
                        Object e = ring.take(slot);
                        if (e != null) {
                            return e;
                        }
                        continue;
                    }
                    if (evd.isFreed()) {
                        throw ReleasedWait.evdFreed();
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
                            LockDomain.lockSpinning(queueLock);
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
                        if (polled || ring.ready(threshold) || evd.isFreed() || !waitable) {
                            continue;
                        }
                    }
                    park(infinite ? 0 : Math.max(1, remaining));
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
            while (signals == seen && !evd.isFreed() && System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
            return signals != seen;
        } finally {
            LockDomain.lockSpinning(queueLock);
        }
    }

    /**
     * Parks the calling waiter until it is woken ({@link ParkedWaiters#unparkAll}), interrupted,
     * {@code nanos} pass (0: no limit) or a spurious wake-up, which the caller's loop sees as nothing
     * changed (queue lock held on entry and on return); allocates nothing.
     */
    private void park(long nanos) throws InterruptedException {
        Thread self = Thread.currentThread();
        parked.add(self);
        queueLock.unlock();
        try {
            if (nanos == 0) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, nanos);
            }
        } finally {
            LockDomain.lockSpinning(queueLock);
            parked.remove(self);
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    public int count() {
        evd.checkLive();
        queueLock.lock();
        try {
            return ring.size();
        } finally {
            queueLock.unlock();
        }
    }

    public void setEnabled(boolean on) {
        evd.checkLive();
        queueLock.lock();
        try {
            evd.checkLive();
            enabled = on;
            if (on) {
                signals++;
                parked.unparkAll();
            }
        } finally {
            queueLock.unlock();
        }
    }

    public void setWaitable(boolean on) {
        evd.checkLive();
        queueLock.lock();
        try {
            evd.checkLive();
            waitable = on;
            signals++;
            parked.unparkAll();
        } finally {
            queueLock.unlock();
        }
    }
}
