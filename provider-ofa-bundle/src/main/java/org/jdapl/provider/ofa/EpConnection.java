package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DAT connection state machine of one EP over rdma_cm: the EP's state (kept in the EP:
 * {@link OfaEp#state}, where the data path reads it), the rdma_cm ID of the
 * current connection, establishment (active: {@code rdma_resolve_addr}, {@code rdma_resolve_route},
 * {@code rdma_connect} as their events arrive on the IA's event thread; passive: accept of a request,
 * CONN_01..CONN_13), and the end of a connection; the service point states are the EP's
 * {@link EpReservation}.
 *
 * <p>A connection ends with one terminal connection event ({@link TerminalEvent}: queued only
 * once everything has completed and rdma_cm is done). A graceful disconnect first waits for
 * the outstanding request DTOs, then sends the DREQ and completes when the peer's DREP arrives (the
 * NetworkDirect scheme: DISC_04..DISC_06, DISC_15); an abrupt one moves the queue pair to the error
 * state at once. "Graceful disconnect waits for outstanding requests" is
 * this class alone: {@link #disconnect} starts the wait, {@link #completedOther} ends it. Guarded by
 * the EP's lock.
 *
 * <p>Behaviours: CONN_01, CONN_02, CONN_03, CONN_04, CONN_05, CONN_06, CONN_07, CONN_08, CONN_09, CONN_10,
 * CONN_11, CONN_12, CONN_13, DISC_01, DISC_02, DISC_03, DISC_04, DISC_05, DISC_06, DISC_15.
 */
final class EpConnection implements OfaRouter.CmEvents {
    private static final Logger LOG = LoggerFactory.getLogger(EpConnection.class);
    /** How long rdma_resolve_addr and rdma_resolve_route may take. */
    private static final int RESOLVE_MILLIS = 2000;

    private final OfaEp ep;
    private final EpLock lock;
    /** The EP's binding, queue pair and queues. */
    private final EpWork work;
    private final ConnParam connParam;

    private final OfaRouter router;
    private final PrivateData wire;
    private final OfaEventLoop loop;

    /** The rdma_cm ID of the current connection, or NULL. */
    private MemorySegment cmId = MemorySegment.NULL;
    private ConnectionEnds ends = ConnectionEnds.NONE;
    /** The next connect's bound ID, its wire private data and its time-out. */
    private final ActiveConnect nextConnect;
    /** The reserved service point holding the EP, or the request it was reserved for (or created for). */
    private final EpReservation reservation;
    /** A graceful disconnect waits for the request queue to drain. */
    private boolean gracefulWaiting;
    /** The event that ends the connection, and when it is queued. */
    private final TerminalEvent terminal;

    /** The EP's work, the IA's router (rdma_cm IDs to EPs), private data convention, event loop (timers), device. */
    EpConnection(OfaEp ep, EpState initial, EpWork work, OfaRouter router, PrivateData wire, OfaEventLoop loop,
                 OfaDevice device) {
        this.ep = ep;
        this.lock = ep.lock;
        this.work = work;
        this.connParam = new ConnParam(device, work);
        this.router = router;
        this.wire = wire;
        this.loop = loop;
        ep.state = initial;
        this.terminal = new TerminalEvent(ep, lock, loop, this, work);
        this.nextConnect = new ActiveConnect(ep.ia, loop, ep);
        this.reservation = new EpReservation(() -> ep.state, s -> ep.state = s);
        if (initial == EpState.UNCONNECTED) {
            nextConnect.prepare(); // the ID of the EP's first connect, bound ahead of it
        }
    }

    void setEnding() {
        ep.ending = !terminal.queued() || gracefulWaiting;
    }

    boolean terminalQueued() {
        return terminal.queued();
    }

    /** Whether {@code id} is the rdma_cm ID of the current connection. */
    boolean isCurrent(MemorySegment id) {
        return cmId.address() == id.address();
    }

    /** The ports and the peer's address of the current (or last) connection. */
    ConnectionEnds ends() {
        return ends;
    }

    /** The EP's service point states (RESERVED, PASSIVE_ and TENTATIVE_CONNECTION_PENDING). */
    EpReservation reservation() {
        return reservation;
    }

    // ---- establishment ----

    /** {@code dat_ep_connect} to {@code destination} (its port the rdma_cm port of {@code connQual}). */
    void connect(InetSocketAddress destination, long connQual, long timeoutMicros, byte[] data) {
        if (ep.state != EpState.UNCONNECTED) {
            throw ep.state.invalid("dat_ep_connect");
        }
        RdmaCm cm = RdmaCm.get();
        // Bound already, so that the local port qualifier is known when connect returns (CONN_02).
        MemorySegment id = nextConnect.take();
        int failure = 0;
        // Registered before rdma_resolve_addr: the event thread may see ADDR_RESOLVED before it returns.
        cmId = id;
        router.addCmId(id, this);
        try {
            cm.resolveAddr(id, connParam.destination(destination),
                    (int) Math.min(RESOLVE_MILLIS, Math.max(1, timeoutMicros / 1000)));
        } catch (VerbsException e) {
            if (e.errno() != Errno.ENETUNREACH && e.errno() != Errno.EHOSTUNREACH
                    && e.errno() != Errno.EADDRNOTAVAIL && e.errno() != Errno.ENODEV) {
                destroyCmId();
                throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                        "dat_ep_connect to " + destination + ": " + e.getMessage(), e);
            }
            failure = e.errno();
        }
        ends = new ConnectionEnds(RdmaCm.sourceAddress(id).getPort(),
                new InetSocketAddress(destination.getAddress(), 0), connQual);
        nextConnect.wire(wire.connect(data));
        ep.state = EpState.ACTIVE_CONNECTION_PENDING;
        MemorySegment mine = id;
        if (timeoutMicros != Dat.TIMEOUT_INFINITE) {
            nextConnect.startTimer(timeoutMicros, () -> whilePending(mine, EventNumber.CONNECTION_TIMED_OUT));
        }
        if (failure != 0) {
            LOG.debug("connect to {} failed at once: {}", destination, failure);
            loop.schedule(0, () -> whilePending(mine, EventNumber.CONNECTION_UNREACHABLE));
        }
    }

    /**
     * The connect time-out or an at-once failure, if the attempt is still the current one.
     *
     * <p>Behaviours: CONN_06, CONN_07.
     */
    private void whilePending(MemorySegment id, EventNumber event) {
        lock.lock();
        try {
            if (cmId.address() == id.address() && ep.state == EpState.ACTIVE_CONNECTION_PENDING) {
                fail(event, new byte[0]);
            }
        } finally {
            lock.unlock();
        }
    }

    /** An rdma_cm event of this EP's ID (event thread). */
    @Override
    public void cmEvent(RdmaCm.CmEvent e) {
        if (e.event() == RdmaCm.EVENT_DISCONNECTED) {
            // A fatal completion that is already in a CQ says BROKEN, not DISCONNECTED: see it first.
            ep.pollCqs();
        }
        lock.lockFromEventThread();
        try {
            if (ep.isFreed() || cmId.address() != e.id().address()) {
                return;
            }
            dispatch(e);
        } finally {
            lock.unlock();
        }
    }

    private void dispatch(RdmaCm.CmEvent e) {
        RdmaCm cm = RdmaCm.get();
        boolean active = ep.state == EpState.ACTIVE_CONNECTION_PENDING;
        boolean connected = ep.state == EpState.CONNECTED || ep.state == EpState.DISCONNECT_PENDING;
        switch (e.event()) {
            case RdmaCm.EVENT_ADDR_RESOLVED -> {
                if (active) {
                    try {
                        cm.resolveRoute(cmId, RESOLVE_MILLIS);
                    } catch (VerbsException x) {
                        fail(EventNumber.CONNECTION_UNREACHABLE, new byte[0]);
                    }
                }
            }
            case RdmaCm.EVENT_ROUTE_RESOLVED -> {
                if (active) {
                    try {
                        EpAttributes a = work.binding().attributes();
                        cm.connect(cmId, connParam.fill(nextConnect.wire(), a.maxRdmaReadIn(), a.maxRdmaReadOut()));
                    } catch (VerbsException x) {
                        LOG.debug("rdma_connect failed", x);
                        fail(EventNumber.CONNECTION_NON_PEER_REJECTED, new byte[0]);
                    }
                }
            }
            case RdmaCm.EVENT_CONNECT_RESPONSE -> {
                if (active) {
                    try {
                        work.queuePair().toRtrRts(cmId, -1, -1);
                        cm.establish(cmId);
                    } catch (VerbsException x) {
                        LOG.debug("completing the connection failed", x);
                        fail(EventNumber.CONNECTION_NON_PEER_REJECTED, new byte[0]);
                        return;
                    }
                    established(wire.received(e.privateData()));
                }
            }
            case RdmaCm.EVENT_ESTABLISHED -> {
                if (ep.state == EpState.COMPLETION_PENDING || active) {
                    established(new byte[0]);
                }
            }
            case RdmaCm.EVENT_REJECTED -> {
                if (active) {
                    byte[] peer = wire.peerRejected(e.status(), e.privateData());
                    fail(peer != null ? EventNumber.CONNECTION_PEER_REJECTED : EventNumber.CONNECTION_NON_PEER_REJECTED,
                            peer != null ? peer : new byte[0]);
                } else if (ep.state == EpState.COMPLETION_PENDING) {
                    fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
                }
            }
            case RdmaCm.EVENT_ADDR_ERROR, RdmaCm.EVENT_ROUTE_ERROR, RdmaCm.EVENT_UNREACHABLE,
                 RdmaCm.EVENT_CONNECT_ERROR -> {
                if (active) {
                    fail(e.event() == RdmaCm.EVENT_CONNECT_ERROR ? EventNumber.CONNECTION_NON_PEER_REJECTED
                            : EventNumber.CONNECTION_UNREACHABLE, new byte[0]);
                } else if (ep.state == EpState.COMPLETION_PENDING) {
                    fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
                } else if (connected) {
                    broken("rdma_cm " + e.name());
                }
            }
            case RdmaCm.EVENT_DISCONNECTED -> disconnectedByCm();
            case RdmaCm.EVENT_TIMEWAIT_EXIT -> terminal.cmDone();
            case RdmaCm.EVENT_DEVICE_REMOVAL -> {
                if (connected) {
                    broken("device removal");
                } else if (active || ep.state == EpState.COMPLETION_PENDING) {
                    fail(EventNumber.CONNECTION_BROKEN, new byte[0]);
                }
            }
            default -> LOG.debug("EP: rdma_cm event {} ignored in {}", e.name(), ep.state);
        }
    }

    private void established(byte[] data) {
        nextConnect.cancelTimer();
        ep.state = EpState.CONNECTED;
        OfaEvd connectEvd = work.binding().connectEvd();
        if (connectEvd != null) {
            connectEvd.enqueue(new DatEvent.Connection(connectEvd, EventNumber.CONNECTION_ESTABLISHED, ep, data));
        }
    }

    /**
     * {@code dat_cr_accept} with this EP (called by the CR; the queue pair exists): RTR and RTS with the
     * request's path, then rdma_accept with the private data. COMPLETION_PENDING until
     * ESTABLISHED.
     *
     * <p>Behaviours: CONN_13.
     */
    void accept(OfaCr cr, byte[] data) {
        boolean own = cr.reservedEp() == ep;
        if (!(ep.state == EpState.UNCONNECTED || own && (ep.state == EpState.PASSIVE_CONNECTION_PENDING
                || ep.state == EpState.TENTATIVE_CONNECTION_PENDING))) {
            throw ep.state.invalid("dat_cr_accept");
        }
        if (!cr.alive()) {
            if (own && ep.state == EpState.PASSIVE_CONNECTION_PENDING) {
                ep.state = EpState.UNCONNECTED;
            }
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                    "dat_cr_accept: the active side has withdrawn its connection request");
        }
        MemorySegment id = cr.takeId();
        cmId = id;
        reservation.requestAccepted();
        router.addCmId(id, this);
        ends = new ConnectionEnds(cr.localPort(), cr.remoteAddress(), cr.remotePort());
        ep.state = EpState.COMPLETION_PENDING;
        try {
            EpAttributes a = work.binding().attributes();
            int resp = Math.min(a.maxRdmaReadIn(), Math.max(0, cr.initiatorDepth()));
            int init = Math.min(a.maxRdmaReadOut(), Math.max(0, cr.responderResources()));
            work.queuePair().toRtrRts(id, resp, init);
            RdmaCm.get().accept(id, connParam.fill(wire.connect(data), resp, init));
        } catch (VerbsException x) {
            LOG.debug("accept failed", x);
            fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
        }
    }

    // ---- the end of a connection ----

    /**
     * {@code dat_ep_disconnect}. See the class comment; during establishment it aborts (the ID is
     * destroyed, which rejects or disconnects at the peer) and the pre-posted receives are flushed
     * (DISC_12); in UNCONNECTED, RESERVED and the pending states of a service point it fails
     * INVALID_STATE; on a DISCONNECTED EP it does nothing.
     *
     * <p>Behaviours: DISC_10, DISC_11, DISC_12.
     */
    void disconnect(CloseFlag flag) {
        switch (ep.state) {
            case DISCONNECTED -> {
            }
            case ACTIVE_CONNECTION_PENDING, COMPLETION_PENDING -> fail(EventNumber.CONNECTION_DISCONNECTED,
                    new byte[0]);
            case CONNECTED -> {
                if (flag == CloseFlag.GRACEFUL) {
                    ep.state = EpState.DISCONNECT_PENDING;
                    gracefulWaiting = true;
                    setEnding();
                    terminal.watch(true);
                    awaitRequests();
                } else {
                    closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
                }
            }
            case DISCONNECT_PENDING -> {
                if (flag == CloseFlag.ABRUPT) {
                    closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
                }
            }
            default -> throw ep.state.invalid("dat_ep_disconnect");
        }
    }

    /**
     * Graceful: the DREQ goes out once no request is outstanding; until then the last one
     * posted must be signalled ({@link SendQueue#signalLast}: a drain after unsignalled requests),
     * else the wait would never end. If the drain cannot be posted, the disconnect goes on abruptly
     * (as DISC_05 allows at any time), which flushes what is still outstanding.
     *
     * <p>Behaviours: DISC_04, DISC_05.
     */
    private void awaitRequests() {
        SendQueue requests = work.sends();
        if (requests.outstanding() == 0) {
            sendDisconnectRequest();
        } else if (requests.signalLast() == SendQueue.LastSignal.FAILED) {
            LOG.debug("EP {}: no drain after unsignalled requests; the graceful disconnect flushes them", ep);
            closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
        }
    }

    /** Graceful: every request DTO has completed; the DREQ goes out and the DREP completes the disconnect. */
    private void sendDisconnectRequest() {
        gracefulWaiting = false;
        setEnding();
        int r = RdmaCm.get().disconnect(cmId);
        if (r != 0) {
            LOG.debug("rdma_disconnect: errno {}", r);
            closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
        }
    }

    /** The peer's DREQ or DREP, or the CM's DREQ time-out. Behaviours: DISC_13. */
    private void disconnectedByCm() {
        if (ep.state == EpState.CONNECTED || ep.state == EpState.DISCONNECT_PENDING) {
            closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
        } else if (ep.state == EpState.COMPLETION_PENDING) {
            fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
        }
    }

    /**
     * Ends an established connection: the QP to the error state (flushing what is outstanding), the
     * DREQ (or DREP) to the peer, and the terminal event once everything has completed and, unless
     * broken, TIMEWAIT_EXIT has come.
     */
    private void closeConnection(EventNumber event, boolean isBroken) {
        ep.state = EpState.DISCONNECTED;
        gracefulWaiting = false;
        work.queuePair().toError();
        terminal.start(event, new byte[0], isBroken);
        if (cmId.address() != 0) {
            RdmaCm.get().disconnect(cmId);
        }
        if (!isBroken) {
            terminal.awaitTimewait(cmId);
        }
    }

    /** {@link #broken} on the event thread, after what it is handling now (a device event). */
    void brokenLater(String why) {
        loop.schedule(0, () -> broken(why));
    }

    /**
     * The transport failed under a connection (fatal completion, QP error event, port down, device removal: DISC_17).
     *
     * <p>Behaviours: DISC_17.
     */
    void broken(String why) {
        lock.lock();
        try {
            if (ep.isFreed()) {
                return;
            }
            if (ep.state == EpState.CONNECTED || ep.state == EpState.DISCONNECT_PENDING) {
                LOG.debug("EP {}: connection broken ({})", ep, why);
                closeConnection(EventNumber.CONNECTION_BROKEN, true);
            } else if (terminal.turnsBroken(ep.state)) {
                terminal.maybeFinish();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * After a completion that took the long way (EP lock held): an error other than a flush broke the
     * connection; a graceful disconnect sends its DREQ once the requests have drained; an ending
     * connection may now queue its terminal event.
     */
    void completedOther(DtoStatus st) {
        if (st != DtoStatus.SUCCESS && st != DtoStatus.FLUSHED) {
            // Any other error moved the QP to the error state: the connection is broken.
            if (ep.state == EpState.CONNECTED || ep.state == EpState.DISCONNECT_PENDING) {
                closeConnection(EventNumber.CONNECTION_BROKEN, true);
            } else {
                terminal.turnsBroken(ep.state);
            }
        }
        if (gracefulWaiting && ep.state == EpState.DISCONNECT_PENDING) {
            awaitRequests();
        }
        if (!terminal.queued()) {
            terminal.maybeFinish();
        }
    }

    /** An SRQ receive of this EP failed other than by a flush: the connection is broken. */
    void srqFailed() {
        if (ep.state == EpState.CONNECTED || ep.state == EpState.DISCONNECT_PENDING) {
            closeConnection(EventNumber.CONNECTION_BROKEN, true);
        }
    }

    /** Establishment ended without a connection: the ID goes, the QP flushes, then the event. */
    private void fail(EventNumber event, byte[] data) {
        nextConnect.cancelTimer();
        destroyCmId();
        ep.state = EpState.DISCONNECTED;
        work.queuePair().toError();
        terminal.start(event, data, true);
    }

    private void destroyCmId() {
        if (cmId.address() != 0) {
            MemorySegment id = cmId;
            cmId = MemorySegment.NULL;
            router.removeCmId(id);
            CmIds.destroyQuietly(id);
        }
    }

    /** {@code dat_ep_reset}: only a DISCONNECTED EP whose event is out; the ID goes. Behaviours: DISC_18. */
    void checkResettable() {
        if (ep.state != EpState.DISCONNECTED) {
            throw ep.state.invalid("dat_ep_reset");
        }
        if (!terminal.queued()) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_DISCONNECTED,
                    "dat_ep_reset: the disconnect is still completing (its event has not been queued)");
        }
        destroyCmId();
    }

    /** After reset: UNCONNECTED with a new queue pair. */
    void resetDone() {
        ends = ConnectionEnds.NONE;
        terminal.reset();
        ep.state = EpState.UNCONNECTED;
        nextConnect.prepare();
    }

    /**
     * Releases the ID, the timers and the native memory at {@code dat_ep_free} (no further event: FREE_06).
     *
     * <p>Behaviours: FREE_06.
     */
    void release() {
        nextConnect.release();
        terminal.release();
        destroyCmId();
    }

    void freeNative() {
        nextConnect.release();
        connParam.free();
    }
}
