package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.provider.emu.evd.Wakeups;

import org.jdapl.provider.emu.LockDomain;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who reads the sockets of a tcp IA, and when: one selector for all of them, selected by exactly one
 * thread at a time (the poller lock). The I/O thread ({@code jdapl-emu-<ia>-io}) selects while nobody
 * else does; a thread waiting on an EVD of the IA selects itself while it waits
 * ({@link #pollWhileWaiting}), and a consumer polling an empty EVD reads at once without blocking
 * ({@link #pollNow}), so data for a consumer is processed in its own thread and wakes nobody. While
 * consumers select, the I/O thread stays parked (it looks every {@link TcpFabric#WAITER_GRACE_NANOS}
 * whether one still does). Each ready key is handled under the IA's domain lock as the selector
 * reports it. Answers (ACKs, read responses) wait for the next frame a consumer posts or for the
 * selecting thread to block again ({@link #flushLater}), so that an answer often shares a write with
 * the consumer's reply; answers a consumer's thread deferred leave at the latest when that thread
 * next polls any tcp IA ({@link #sendOwed}), and those the I/O thread deferred before it parks to
 * leave the sockets to consumers, so that one thread polling the EVDs of several IAs (both ends of a
 * connection, say) never waits for an I/O thread's turn for an answer.
 */
final class TcpPoller {
    private static final Logger LOG = LoggerFactory.getLogger(TcpPoller.class);
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(TcpFabric.TICK_MILLIS);
    private static final long WAITER_GRACE_NANOS = TcpFabric.WAITER_GRACE_NANOS;
    private static final long TICK_MILLIS = TcpFabric.TICK_MILLIS;
    private static final long BUSY_POLL_NANOS = TcpFabric.BUSY_POLL_NANOS;
    /** One look in this many of a polling consumer selects even where it could read the socket directly. */
    private static final int SELECT_EVERY = 8;

    /**
     * The pollers in which the current thread, a consumer's, deferred answers ({@link #flushLater}): it
     * sends them before it next polls ({@link #sendOwed}).
     */
    private static final ThreadLocal<ArrayList<TcpPoller>> OWED = ThreadLocal.withInitial(ArrayList::new);

    private final TcpFabric fabric;
    private final String iaName;
    private final Selector selector;
    /** The IA's domain lock (a tcp IA's domain is never merged). */
    private final ReentrantLock lock;
    private final List<TcpConnection> flushLater = new ArrayList<>();
    /** Held by the thread that selects: the I/O thread, or a consumer of an EVD of the IA. */
    private final ReentrantLock pollerLock = new ReentrantLock(true);
    /** Consumers' looks without blocking (pollerLock held), for {@link #readSole}. */
    private int polls;
    private final AtomicInteger intending = new AtomicInteger();
    private final java.util.function.Consumer<SelectionKey> handler = this::handleLocked;
    private volatile Thread poller;
    private volatile boolean pollWanted;
    private volatile boolean wakeRequested;
    private volatile long lastWaiterPoll = System.nanoTime() - WAITER_GRACE_NANOS;
    private volatile long lastTick = System.nanoTime();
    private volatile boolean answersDeferred;
    private Thread ioThread;
    /** When the last select of the IA returned: the time of the I/O that followed, without reading the clock. */
    private volatile long clock = System.nanoTime();
    /** The clock was read after the current select returned (only the polling thread uses it). */
    private boolean clockFresh;

    /** The poller of {@code fabric}'s {@code selector}, under {@code lock}; {@code iaName} names the IA in the log. */
    TcpPoller(TcpFabric fabric, Selector selector, ReentrantLock lock, String iaName) {
        this.fabric = fabric;
        this.iaName = iaName;
        this.selector = selector;
        this.lock = lock;
    }

    /** Starts the I/O thread. */
    void start(String name) {
        ioThread = Thread.ofPlatform().daemon().name(name).start(this::loop);
    }

    /** The I/O thread, to join when the IA closes. */
    Thread ioThread() {
        return ioThread;
    }

    /**
     * Sends {@code c}'s queued answers (ACKs, read responses) later: with the next frame a consumer
     * posts on the connection, or before the polling thread blocks again, whichever comes first
     * (lock held). The waiter woken by the answered frame runs first, and an answer often travels in
     * one write with the consumer's reply.
     */
    void flushLater(TcpConnection c) {
        if (!flushLater.contains(c)) {
            flushLater.add(c);
            answersDeferred = true;
        }
        if (consumerReads()) {
            ArrayList<TcpPoller> owed = OWED.get();
            if (!owed.contains(this)) {
                owed.add(this);
            }
        }
    }

    /**
     * Sends the answers the current thread deferred in any poller (no domain lock held): called as a
     * consumer's thread begins to poll, so that the answers of what it took in one IA leave before it
     * looks at another (whose input may be waiting for them), not when an I/O thread next selects.
     */
    static void sendOwed() {
        ArrayList<TcpPoller> owed = OWED.get();
        if (owed.isEmpty()) {
            return;
        }
        for (int i = 0; i < owed.size(); i++) {
            owed.get(i).sendDeferredAnswersNow();
        }
        owed.clear();
    }

    /** Sends the deferred answers, if any, under the domain lock. */
    private void sendDeferredAnswersNow() {
        if (answersDeferred) {
            LockDomain.lockSpinning(lock);
            try {
                if (fabric.running()) {
                    sendDeferredAnswers();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** {@code c} has written everything it had, deferred answers included (lock held). */
    void answered(TcpConnection c) {
        if (answersDeferred && flushLater.remove(c) && flushLater.isEmpty()) {
            answersDeferred = false;
        }
    }

    /** Sends the answers deferred by {@link #flushLater} (lock held). */
    private void sendDeferredAnswers() {
        if (answersDeferred) {
            answersDeferred = false;
            for (int i = 0; i < flushLater.size(); i++) {
                flushLater.get(i).flush();
            }
            flushLater.clear();
        }
    }

    /**
     * Whether the calling thread, which reads the sockets, is a consumer's (a waiter or a polling
     * dequeue) rather than the I/O thread: a consumer waits for the input anyway, the I/O thread
     * never spins.
     */
    boolean consumerReads() {
        return Thread.currentThread() != ioThread;
    }

    void wakeup() {
        Selector s = selector;
        if (s != null && Thread.currentThread() != poller) {
            s.wakeup();
        }
    }

    private void loop() {
        Thread me = Thread.currentThread();
        try {
            while (fabric.running()) {
                // Threads waiting on EVDs poll the sockets and process whatever is ready, for every
                // connection of the IA. Stay out of their way until none has polled for the grace time.
                // The answers of what this thread read leave before it parks, as before it blocks in a select.
                Thread p = poller;
                if (pollWanted || (p != null && p != me) || intending.get() > 0) {
                    pollWanted = false;
                    sendDeferredAnswersNow();
                    LockSupport.parkNanos(WAITER_GRACE_NANOS);
                    continue;
                }
                long sinceWaiter = System.nanoTime() - lastWaiterPoll;
                if (sinceWaiter < WAITER_GRACE_NANOS) {
                    sendDeferredAnswersNow();
                    LockSupport.parkNanos(Math.max(WAITER_GRACE_NANOS / 8, WAITER_GRACE_NANOS - sinceWaiter));
                    continue;
                }
                if (!pollerLock.tryLock()) {
                    LockSupport.parkNanos(WAITER_GRACE_NANOS / 4);
                    continue;
                }
                try {
                    poller = me;
                    selectAndProcess(TICK_MILLIS, 0);
                } finally {
                    poller = null;
                    pollerLock.unlock();
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (fabric.running()) {
                LOG.error("the I/O thread of IA {} failed", iaName, e);
            }
        } finally {
            pollerLock.lock();
            try {
                selector.close();
            } catch (IOException e) {
                LOG.debug("closing the selector of IA {}: {}", iaName, e.toString());
            } finally {
                pollerLock.unlock();
            }
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (0: not at all) for socket readiness and processes it: reads,
     * writes, connects, accepts, and the keepalive checks when due (pollerLock held, fabric lock not).
     * Each ready key is handled under the fabric lock as the selector reports it, without the selected
     * key set.
     */
    private void selectAndProcess(long timeoutMillis, long spinNanos) throws IOException {
        sendDeferredAnswersNow();
        int ready = 0;
        if (timeoutMillis <= 0 && spinNanos == 0 && (++polls & SELECT_EVERY - 1) != 0 && readSole()) {
            ready = 1;
        } else if (timeoutMillis <= 0 || spinNanos > 0 || wakeRequested) {
            ready = selector.selectNow(handler);
        }
        if (ready == 0 && spinNanos > 0) {
            long end = System.nanoTime() + spinNanos;
            while (ready == 0 && !wakeRequested && System.nanoTime() - end < 0) {
                Thread.onSpinWait();
                ready = selector.selectNow(handler);
            }
        }
        if (ready == 0 && timeoutMillis > 0 && !wakeRequested) {
            selector.select(handler, timeoutMillis);
        }
        long now;
        if (clockFresh) {
            clockFresh = false;
            now = clock;
        } else {
            now = System.nanoTime();
            clock = now;
        }
        if (now - lastTick >= TICK_NANOS) {
            LockDomain.lockSpinning(lock);
            try {
                lastTick = now;
                fabric.tick(now);
            } finally {
                lock.unlock();
            }
        }
        Wakeups.run();
    }

    /**
     * A consumer's look without blocking at an IA with one established connection that only waits
     * for input ({@link TcpFabric#soleReader}): a read of its socket, as the selector would have
     * reported it readable, rather than a select and then the read; one look in {@link #SELECT_EVERY}
     * still selects, for accepts and connects. An empty read costs what an empty select costs, and
     * input that is there is read one system call and the selector's bookkeeping sooner.
     *
     * @return false if the IA has no such connection (the caller selects)
     */
    private boolean readSole() {
        LockDomain.lockSpinning(lock);
        try {
            TcpConnection c = fabric.running() ? fabric.soleReader() : null;
            if (c == null) {
                return false;
            }
            c.onReadable();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Handles one ready key under the fabric lock (called by the selector during a select). */
    private void handleLocked(SelectionKey k) {
        if (!clockFresh) {
            clock = System.nanoTime();
            clockFresh = true;
        }
        LockDomain.lockSpinning(lock);
        try {
            if (fabric.running()) {
                fabric.handle(k);
            }
        } finally {
            lock.unlock();
        }
    }

    void announcePoll() {
        intending.incrementAndGet();
    }

    boolean pollWhileWaiting(long maxNanos) {
        sendOwed();
        try {
            return pollAsWaiter(maxNanos);
        } finally {
            intending.decrementAndGet();
        }
    }

    private boolean pollAsWaiter(long maxNanos) {
        if (!fabric.running()) {
            return false;
        }
        if (!pollerLock.tryLock()) {
            if (poller != ioThread) {
                return false;
            }
            // The I/O thread is selecting: ask it to step back, and take over once it has.
            pollWanted = true;
            selector.wakeup();
            // Tried, not queued for with a timed tryLock, which allocates a node whenever it waits.
            long end = System.nanoTime() + WAITER_GRACE_NANOS;
            while (!pollerLock.tryLock()) {
                if (Thread.currentThread().isInterrupted()) {
                    return true;
                }
                if (System.nanoTime() - end >= 0) {
                    return false;
                }
                Thread.yield();
            }
        }
        try {
            if (!fabric.running()) {
                return false;
            }
            poller = Thread.currentThread();
            selectAndProcess(Math.max(1, Math.min(TICK_MILLIS, TimeUnit.NANOSECONDS.toMillis(maxNanos))),
                    Math.min(BUSY_POLL_NANOS, maxNanos));
            return true;
        } catch (IOException | ClosedSelectorException e) {
            return false;
        } finally {
            if (wakeRequested) {
                wakeRequested = false;
            }
            long now = clock;
            if (now - lastWaiterPoll > WAITER_GRACE_NANOS / 16) {
                lastWaiterPoll = now;
            }
            poller = null;
            pollerLock.unlock();
        }
    }

    /**
     * Reads and processes what the sockets hold now for a consumer polling an empty EVD. The I/O
     * thread steps back while consumers poll (as for waiters), so a polling consumer is served by
     * its own thread, not when the I/O thread next looks.
     */
    void pollNow() {
        sendOwed();
        if (!fabric.running()) {
            return;
        }
        if (!pollerLock.tryLock()) {
            if (poller == ioThread) {
                pollWanted = true;
                selector.wakeup();
            }
            return;
        }
        try {
            if (!fabric.running()) {
                return;
            }
            poller = Thread.currentThread();
            selectAndProcess(0, 0);
        } catch (IOException | ClosedSelectorException e) {
            LOG.debug("IA {}: a consumer's poll failed: {}", iaName, e.toString());
        } finally {
            lastWaiterPoll = clock;
            poller = null;
            pollerLock.unlock();
        }
    }

    /**
     * A consumer that polled an empty EVD for a while selects, blocking up to {@code maxNanos} in all
     * until {@code done} holds, as a waiter does; announced first, so an event queued from elsewhere
     * ends a select ({@link #wakePoller}), and skipped if {@code done} already holds then.
     */
    void pollBriefly(long maxNanos, java.util.function.BooleanSupplier done) {
        sendOwed();
        announcePoll();
        try {
            long end = System.nanoTime() + maxNanos;
            long left = maxNanos;
            // Input that brings no event for this consumer (an ACK, say) does not end the poll.
            while (left > 0 && !done.getAsBoolean() && pollAsWaiter(left)) {
                left = end - System.nanoTime();
            }
        } finally {
            intending.decrementAndGet();
        }
    }

    /**
     * Waits until no thread selects (the IA is detached, its selector woken): a consumer's thread that
     * polled the sockets has left them.
     *
     * @return false if one still selects after {@code bound}
     */
    boolean awaitNoPoller(java.time.Duration bound) {
        selector.wakeup();
        try {
            if (!pollerLock.tryLock(bound.toNanos(), TimeUnit.NANOSECONDS)) {
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        pollerLock.unlock();
        return true;
    }

    /** Ends a poll of a waiting thread early: an event for a waiter came from elsewhere. */
    void wakePoller() {
        // The event was published by release stores: order them before the read of intending, as a
        // poller announces itself (a full barrier) before it looks at its queue.
        VarHandle.fullFence();
        if (intending.get() > 0) {
            wakeRequested = true;
            if (poller != Thread.currentThread()) {
                selector.wakeup();
            }
        }
    }

    /**
     * A coarse clock for idle and keepalive bookkeeping: the time the last select of the IA returned
     * (someone selects at least every {@link #TICK_MILLIS} ms), so that I/O needs no clock read of its own.
     */
    long clock() {
        return clock;
    }
}
