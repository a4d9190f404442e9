package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one connection event that ends a connection (DISCONNECTED, BROKEN, PEER_REJECTED, ...) and
 * when it may be queued: only after the queue pair is in the error state and every outstanding work
 * request of the EP has completed (flushed or not), and, for a connection that was established,
 * after rdma_cm's TIMEWAIT_EXIT (at most {@link #TIMEWAIT_LIMIT_NANOS}). No byte moves after the
 * event and all completions precede it; receives posted after
 * the end complete FLUSHED just before it. While it waits, the EP's CQs are kept armed and polled.
 * Part of {@link EpConnection}; guarded by the EP's lock.
 *
 * <p>Behaviours: DISC_08, DISC_09, DISC_14, DISC_16.
 */
final class TerminalEvent {
    private static final Logger LOG = LoggerFactory.getLogger(TerminalEvent.class);
    /** How long the DISCONNECTED event waits for TIMEWAIT_EXIT before it is queued anyway. */
    private static final long TIMEWAIT_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** The EP the event reports on. */
    private final OfaEp ep;
    private final EpLock lock;
    private final OfaEventLoop loop;
    private final EpConnection connection;
    /** What must complete first: the EP's queues; and the EVDs they complete on. */
    private final EpWork work;
    private EventNumber event;
    private byte[] data = new byte[0];
    private boolean queued = true;
    private boolean cmDone;
    /** The EP's CQs are kept armed and polled (graceful disconnect, ending connection). */
    private boolean watching;
    private OfaEventLoop.Timer timewaitTimer;

    TerminalEvent(OfaEp ep, EpLock lock, OfaEventLoop loop, EpConnection connection, EpWork work) {
        this.ep = ep;
        this.lock = lock;
        this.loop = loop;
        this.connection = connection;
        this.work = work;
    }

    /** Whether the event of the last connection is out (or there was none). */
    boolean queued() {
        return queued;
    }

    /** The connection ended with {@code e}: it is queued once everything has completed and rdma_cm is done. */
    void start(EventNumber e, byte[] d, boolean cmAlreadyDone) {
        event = e;
        data = d;
        queued = false;
        connection.setEnding();
        cmDone = cmAlreadyDone;
        watch(true);
        maybeFinish();
    }

    /** After a disconnect of an established connection: TIMEWAIT_EXIT of {@code id}, or the limit. */
    void awaitTimewait(MemorySegment id) {
        timewaitTimer = loop.schedule(TIMEWAIT_LIMIT_NANOS, () -> {
            lock.lock();
            try {
                if (connection.isCurrent(id) && !cmDone) {
                    LOG.debug("no TIMEWAIT_EXIT within {} s; completing the disconnect",
                            TimeUnit.NANOSECONDS.toSeconds(TIMEWAIT_LIMIT_NANOS));
                    cmDone();
                }
            } finally {
                lock.unlock();
            }
        });
    }

    /** rdma_cm is done with the connection (TIMEWAIT_EXIT). */
    void cmDone() {
        cmDone = true;
        maybeFinish();
    }

    /** A disconnect under way whose event is still to come says BROKEN instead (the transport failed first). */
    boolean turnsBroken(EpState state) {
        if (state == EpState.DISCONNECTED && !queued && event == EventNumber.CONNECTION_DISCONNECTED) {
            event = EventNumber.CONNECTION_BROKEN;
            cmDone = true;
            return true;
        }
        return false;
    }

    /** Queues the event once nothing is outstanding and rdma_cm is done. */
    void maybeFinish() {
        if (!queued && cmDone && work.outstandingSends() > 0) {
            work.retireUnsignalledTail();
        }
        if (queued || !cmDone || work.outstandingSends() > 0 || work.outstandingRecvs() > 0) {
            return;
        }
        queued = true;
        connection.setEnding();
        watch(false);
        cancelTimer();
        work.flushLateRecvs();
        OfaEvd connectEvd = work.connectEvd();
        if (connectEvd != null && !ep.isFreed()) {
            connectEvd.enqueue(new DatEvent.Connection(connectEvd, event, ep, data));
        }
    }

    /** Keeps the EP's CQs armed and polled while its requests drain or its connection ends. */
    void watch(boolean on) {
        if (on == watching) {
            return;
        }
        watching = on;
        for (OfaEvd e : work.dtoEvds()) {
            if (e == null) {
                continue;
            }
            e.keepArmed(on);
            if (on) {
                loop.schedule(0, e::armAndPoll);
            }
        }
    }

    private void cancelTimer() {
        if (timewaitTimer != null) {
            timewaitTimer.cancel();
            timewaitTimer = null;
        }
    }

    /** After {@code dat_ep_reset}: no event of a past connection. */
    void reset() {
        event = null;
    }

    /** At {@code dat_ep_free}: no event will come. Behaviours: FREE_06. */
    void release() {
        cancelTimer();
        queued = true;
        connection.setEnding();
        watch(false);
    }
}
