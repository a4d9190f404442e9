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

    private final OfaEp ep;
    private final EpConnection connection;
    private EventNumber event;
    private byte[] data = new byte[0];
    private boolean queued = true;
    private boolean cmDone;
    /** The EP's CQs are kept armed and polled (graceful disconnect, ending connection). */
    private boolean watching;
    private OfaEventLoop.Timer timewaitTimer;

    TerminalEvent(OfaEp ep, EpConnection connection) {
        this.ep = ep;
        this.connection = connection;
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
        timewaitTimer = ep.ia.loop().schedule(TIMEWAIT_LIMIT_NANOS, () -> {
            ep.lock.lock();
            try {
                if (connection.isCurrent(id) && !cmDone) {
                    LOG.debug("no TIMEWAIT_EXIT within {} s; completing the disconnect",
                            TimeUnit.NANOSECONDS.toSeconds(TIMEWAIT_LIMIT_NANOS));
                    cmDone();
                }
            } finally {
                ep.lock.unlock();
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
        if (!queued && cmDone && ep.sendQueue().outstanding() > 0) {
            ep.sendQueue().retireUnsignalledTail();
        }
        if (queued || !cmDone || ep.sendQueue().outstanding() > 0 || ep.recvQueue().outstanding() > 0) {
            return;
        }
        queued = true;
        connection.setEnding();
        watch(false);
        cancelTimer();
        ep.recvQueue().flushLate();
        OfaEvd connectEvd = ep.binding().connectEvd();
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
        OfaEvd recv = ep.binding().recvEvd();
        OfaEvd request = ep.binding().requestEvd();
        for (OfaEvd e : recv == request ? new OfaEvd[] {request} : new OfaEvd[] {recv, request}) {
            if (e == null) {
                continue;
            }
            if (on) {
                e.cq.closingUsers.incrementAndGet();
                ep.ia.loop().schedule(0, e::armAndPoll);
            } else {
                e.cq.closingUsers.decrementAndGet();
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
