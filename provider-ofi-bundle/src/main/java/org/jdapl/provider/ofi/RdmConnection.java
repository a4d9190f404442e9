package org.jdapl.provider.ofi;

import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiRdm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DAT connection state machine of one EP over RDM endpoints (RDM_PROTOCOL.md). A connection
 * owns two RDM endpoints: the data endpoint, bound to the EVDs' CQs and to an address vector whose
 * only entry ({@code fi_addr_t} 0) is the peer's data endpoint, so the data path ({@link EpData})
 * posts exactly as on a MSG endpoint; and a control endpoint ({@link RdmChannel}) that carries the
 * protocol: REQ to the PSP, ACCEPT/REJECT back, RTU, DISC, ABORT and KEEPALIVE. On rxm the control
 * endpoint is the IA's hub ({@link #viaHub}).
 *
 * <p>The active side is ESTABLISHED when the ACCEPT arrives (it answers RTU), the passive side when
 * the RTU arrives (or a DTO of the connection completes first); an ACCEPT that finds the active side
 * no longer waiting (timed out, disconnected, freed) is answered ABORT, which the passive side
 * reports as ACCEPT_COMPLETION_ERROR. The disconnect follows the DAT rules and the NetworkDirect
 * scheme: a graceful one waits in DISCONNECT_PENDING until the last request completes; then, and at
 * once for an abrupt one or the peer's DISC, the peer is told (DISC), the CQs are read, the data
 * endpoint is closed (no byte moves after that), every DTO still outstanding completes FLUSHED
 * exactly once, and only then the one terminal event is queued. A peer silent for
 * {@link RdmIa#KEEPALIVE_BOUND_NANOS} breaks the connection (BROKEN).
 *
 * <p>Over 500 lines: the state machine's transitions (establishment, disconnect, keepalive) are kept
 * in one class, so that each message's effect reads in one place; telling a refused RMA
 * ({@link RdmRefusedRma}) and closing the data endpoint ({@link RdmDataClose}) are classes of their own.
 *
 * <p>Behaviours: CONN_02, CONN_03, CONN_04, CONN_05, CONN_06, CONN_07, CONN_10, CONN_13, DISC_01, DISC_04,
 * DISC_06, DISC_08, DISC_10, DISC_11, DISC_12, DISC_13, DISC_14, DISC_16, DISC_18, LMR_05, LMR_06, DISC_02, DISC_03, OBJ_07.
 */
final class RdmConnection extends Connection implements RdmChannel.Owner {
    private static final Logger LOG = LoggerFactory.getLogger(RdmConnection.class);

    private final RdmIa rdm;
    /** The data endpoint, its address vector and the receive credits. */
    private final RdmDataEndpoint data;
    private RdmChannel ctl;
    /**
     * The control messages go through the IA's hub ({@code ctl} is the hub's channel, not closed with
     * the connection): on a socket-address provider (rxm), where every endpoint is a listening one
     * that rxm connects anew to each peer (RDM_PROTOCOL.md, Endpoints).
     */
    private boolean viaHub;
    private long connId;
    private long peerConn;
    private long peerCtl = -1;
    /** A shm connection's local port qualifier: a number of this process's, unique among its connections. */
    private long localPort;
    private static final java.util.concurrent.atomic.AtomicInteger PORTS = new java.util.concurrent.atomic.AtomicInteger(
            (int) (ProcessHandle.current().pid() * 7919 % 30000));
    private volatile long lastHeard;
    private volatile long lastSent;
    /** What tells a refused RDMA Write or Read on this connection. */
    private final RdmRefusedRma refusals = new RdmRefusedRma();

    RdmConnection(OfiEp ep) {
        super(ep);
        this.rdm = ep.ia.rdm;
        this.data = new RdmDataEndpoint(ep, rdm);
    }

    @Override
    long fid() {
        return data.fid;
    }

    @Override
    long localPort() {
        if (ctl == null) {
            return 0;
        }
        return rdm.named || viaHub ? localPort : rdm.portOf(ctl.name);
    }

    /** Opens the data endpoint and the control endpoint; posts the receives that waited. The EP's lock is held. */
    private void open() {
        refusals.reset();
        data.open();
        try {
            if (ctl == null && !rdm.named) {
                ctl = rdm.hub().channel;
                viaHub = true;
            } else if (ctl == null) {
                ctl = new RdmChannel(ep.ia, null, this);
                localPort = 1024 + Math.floorMod(PORTS.incrementAndGet(), 64000);
            }
        } catch (RuntimeException e) {
            data.close(true);
            throw e;
        }
        if (viaHub) {
            localPort = rdm.portOf(data.name); // the data endpoint's port: the hub's is the IA's
        }
        connId = ThreadLocalRandom.current().nextLong() | 1;
        rdm.connections.put(connId, this);
    }

    /** Closes the data endpoint (on shm held while its peer of this process is open, {@link RdmDataClose}). The EP's lock is held. */
    private void closeData() {
        data.close(false);
    }

    private void closeControl() {
        rdm.connections.remove(connId, this);
        if (ctl != null) {
            if (!viaHub) {
                ctl.close();
            }
            ctl = null;
            viaHub = false;
        }
    }

    private RdmMessage message(int type, int flags, byte[] pd, int port) {
        return message(type, flags, pd, port, ctl.name);
    }

    /** A message of this connection sent from the endpoint named {@code from} (its own control endpoint or the hub). */
    private RdmMessage message(int type, int flags, byte[] pd, int port, byte[] from) {
        return new RdmMessage(type, flags, connId, peerConn, RdmMessage.ip(ep.ia.address.getAddress()), port, ctl.name, data.name,
                pd == null ? new byte[0] : pd, from);
    }

    private void sendPeer(RdmMessage m) {
        if (ctl != null && peerCtl >= 0) {
            try {
                ctl.send(peerCtl, m);
                lastSent = System.nanoTime();
            } catch (DatException e) {
                LOG.debug("control message {} to the peer: {}", m.type(), e.getMessage());
            }
        }
    }

    /**
     * Opens the endpoints and sends the REQ. The EVDs' CQ locks are taken before the EP's, as a CQ
     * reader takes them: with the EP's lock taken first, a reader of the CQ waiting for it would keep
     * the CQ's lock, and the data endpoint would be bound and enabled while the CQ is read (rxm 1.17:
     * a CQ read progresses every bound endpoint, and one bound but not yet enabled has no core CQ).
     */
    @Override
    void connect(InetSocketAddress target, long timeoutMicros, byte[] privateData) {
        underCqLocks(ep.recvEvd(), ep.requestEvd(), () -> connectLocked(target, timeoutMicros, privateData));
    }

    private void connectLocked(InetSocketAddress target, long timeoutMicros, byte[] privateData) {
        boolean refused = false;
        boolean unreachable = false;
        synchronized (ep) {
            ep.live();
            if (state != EpState.UNCONNECTED) {
                throw DatException.invalidState(subtype(state), "dat_ep_connect in " + state);
            }
            open();
            remote = target;
            remotePort = target.getPort();
            peerConn = 0;
            peerCtl = -1;
            state = EpState.ACTIVE_CONNECTION_PENDING;
            unreachable = rdm.named && !RdmIa.thisHost(target.getAddress());
            byte[] pspName = unreachable ? null : rdm.named ? RdmListener.pspName(target.getPort())
                    : rdm.pspAddress(target.getAddress(), target.getPort());
            if (pspName == null) {
                refused = true;
            } else {
                try {
                    RdmHub hub = rdm.hub();
                    hub.send(pspName, message(RdmMessage.REQ, 0, data.wire(privateData), (int) localPort(), hub.channel.name));
                } catch (DatException e) {
                    LOG.debug("REQ to {}: {}", target, e.getMessage());
                    refused = true;
                    // rxm's fi_send fails at once where the kernel has no route to the host (CONN_06)
                    unreachable = e.getCause() instanceof FiException f && (f.errno() == 101 || f.errno() == 113);
                }
            }
            lastHeard = lastSent = System.nanoTime();
            if (timeoutMicros != Dat.TIMEOUT_INFINITE && timeoutMicros < Long.MAX_VALUE / 1000) {
                ep.ia.progress.deadlines.put(ep, System.nanoTime() + timeoutMicros * 1000);
            }
        }
        if (refused) {
            EventNumber end = unreachable ? EventNumber.CONNECTION_UNREACHABLE : EventNumber.CONNECTION_NON_PEER_REJECTED;
            ep.ia.progress.later(() -> terminate(end, null));
        }
    }

    /** The passive side accepts the request {@code req} on this EP (the CQs' locks first, as {@link #connect}). */
    void accept(RdmMessage req, byte[] privateData) {
        underCqLocks(ep.recvEvd(), ep.requestEvd(), () -> acceptLocked(req, privateData));
    }

    private void acceptLocked(RdmMessage req, byte[] privateData) {
        synchronized (ep) {
            ep.live();
            if (state != EpState.UNCONNECTED && state != EpState.PASSIVE_CONNECTION_PENDING
                    && state != EpState.TENTATIVE_CONNECTION_PENDING) {
                throw DatException.invalidState(subtype(state), "dat_cr_accept on an EP in " + state);
            }
            open();
            try {
                data.insertPeer(req.data());
                peerCtl = ctl.insert(req.ctl());
            } catch (FiException | DatException e) {
                closeData();
                closeControl();
                throw e instanceof FiException fe ? FiErrors.toDat(fe) : (DatException) e;
            }
            peerConn = req.src();
            remote = new InetSocketAddress(RdmMessage.ip(req.ip()), 0);
            remotePort = req.port();
            state = EpState.COMPLETION_PENDING;
            lastHeard = System.nanoTime();
            data.established(req.pd());
            RdmHub hub = rdm.hub();
            try {
                hub.send(req.from(), message(RdmMessage.ACCEPT, 0, data.wire(privateData), (int) localPort(), hub.channel.name));
                lastSent = System.nanoTime();
            } catch (DatException e) {
                LOG.debug("ACCEPT to {}: {}", FiRdm.toString(req.from()), e.getMessage());
                ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, null));
            }
        }
    }

    @Override
    void completionBeforeConnected() {
        if (state == EpState.COMPLETION_PENDING) {
            established(new byte[0]);
        }
    }

    /** CONNECTED and the ESTABLISHED event (the EP's lock is held). */
    private void established(byte[] pd) {
        state = EpState.CONNECTED;
        ep.ia.progress.deadlines.remove(ep);
        queueEvent(EventNumber.CONNECTION_ESTABLISHED, pd);
    }

    /**
     * A post needs CONNECTED; a peer of this process whose data endpoint is closed has disconnected
     * (its DISC is on the way): the post fails and the connection ends ({@link RdmLocal}).
     */
    @Override
    void checkCanPost() {
        super.checkCanPost();
        if (data.peerGone()) {
            ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_DISCONNECTED, null));
            throw DatException.invalidState(subtype(state), "the peer has disconnected");
        }
    }

    /**
     * Tells the peer (DISC, or ABORT before it was established), closes the data endpoint with the
     * CQs' locks held, flushes what is left and queues the event.
     */
    @Override
    void end(EventNumber number, byte[] privateData) {
        underCqLocks(ep.recvEvd(), ep.requestEvd(), () -> endLocked(number, privateData));
    }

    private void endLocked(EventNumber number, byte[] privateData) {
        synchronized (ep) {
            if (ep.freed || state == EpState.DISCONNECTED || state == EpState.UNCONNECTED
                    || state == EpState.RESERVED) {
                return;
            }
            boolean linked = state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING;
            if (number != EventNumber.CONNECTION_BROKEN || linked) {
                sendPeer(message(linked ? RdmMessage.DISC : RdmMessage.ABORT, 0, null, 0));
            }
            state = EpState.DISCONNECTED;
            ep.ia.progress.deadlines.remove(ep);
            rdm.connections.remove(connId, this);
            closeData();
            ep.data.flush();
            queueEvent(number, privateData);
        }
    }

    /**
     * The keepalive: a message after a second of silence, BROKEN after the bound; on shm, an RDMA Write
     * or Read the target refused ({@link RdmRefusedRma#watch}) completes REMOTE_ACCESS and breaks the
     * connection (progress thread). Behaviours: LMR_05, LMR_06.
     */
    void tick(long now) {
        EventNumber end = null;
        long refused = -1;
        synchronized (ep) {
            if (state != EpState.CONNECTED && state != EpState.DISCONNECT_PENDING
                    && state != EpState.COMPLETION_PENDING) {
                return;
            }
            refused = refusals.watch(ep.data.request, rdm.named && state == EpState.CONNECTED, now, lastHeard);
            if (now - lastHeard > RdmIa.KEEPALIVE_BOUND_NANOS) {
                end = state == EpState.COMPLETION_PENDING ? EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR
                        : EventNumber.CONNECTION_BROKEN;
            } else if (now - lastSent > RdmIa.KEEPALIVE_INTERVAL_NANOS) {
                sendPeer(message(RdmMessage.KEEPALIVE, 0, null, 0));
            }
        }
        if (refused >= 0) {
            LOG.debug("EP {}: the peer took no step of an RDMA Write or Read for {} ms while it answered: refused",
                    ep.id, RdmRefusedRma.RMA_BOUND_NANOS / 1_000_000);
            ep.completed(refused, RdmRefusedRma.EACCES, 0); // REMOTE_ACCESS, and the connection breaks (afterCompletion)
        }
        if (end != null) {
            LOG.debug("the peer of EP {} was silent for {} ms", ep.id, RdmIa.KEEPALIVE_BOUND_NANOS / 1_000_000);
            terminate(end, null);
        }
    }

    /**
     * rxm: the provider cancelled a request of this connection while connected ({@code FI_ECANCELED};
     * {@link RdmRefusedRma#cancelled}): the request stays outstanding, requests posted meanwhile wait
     * ({@link EpData#stalled}: rxm would connect anew for them), and the peer is asked. Its DISC
     * first: DISCONNECTED, every request FLUSHED; its answer: the oldest cancelled RDMA Write or Read
     * completes REMOTE_ACCESS and the connection breaks (BROKEN, the rest FLUSHED). The EP's lock is
     * held. Behaviours: LMR_05, LMR_06.
     */
    @Override
    boolean cancelled(long context) {
        DtoQueue q = ep.data.request;
        int s = DtoQueue.isRequest(context) && !OfiExtensions.isWriteHalf(context) ? q.slot(DtoQueue.seq(context)) : -1;
        if (rdm.named || s < 0 || (state != EpState.CONNECTED && state != EpState.DISCONNECT_PENDING)) {
            return false;
        }
        if (refusals.cancelled(q, s, context)) {
            ep.data.stalled = true;
            LOG.debug("EP {}: the provider cancelled a request while connected; the peer is asked", ep.id);
            sendPeer(message(RdmMessage.KEEPALIVE, RdmMessage.PROBE, null, 0));
        }
        return true;
    }

    @Override
    public void received(RdmChannel channel, RdmMessage m) {
        EventNumber end = null;
        byte[] pd = null;
        long refused = -1;
        synchronized (ep) {
            if (m.type() == RdmMessage.ACCEPT && (state != EpState.ACTIVE_CONNECTION_PENDING || m.dst() != connId)) {
                // The active side no longer waits for this accept: the passive side's accept fails.
                rdm.hub().abort(m);
                return;
            }
            if (m.dst() != connId || (peerConn != 0 && m.src() != peerConn)) {
                return;
            }
            lastHeard = System.nanoTime();
            switch (m.type()) {
                case RdmMessage.ACCEPT -> {
                    try {
                        data.insertPeer(m.data());
                        peerCtl = ctl.insert(m.ctl());
                        peerConn = m.src();
                        sendPeer(message(RdmMessage.RTU, 0, null, 0));
                        data.established(m.pd());
                        established(MsgCredits.consumerData(m.pd()));
                    } catch (FiException | DatException e) {
                        LOG.debug("accept of EP {}: {}", ep.id, e.getMessage());
                        end = EventNumber.CONNECTION_NON_PEER_REJECTED;
                    }
                }
                case RdmMessage.REJECT -> {
                    if (state == EpState.ACTIVE_CONNECTION_PENDING) {
                        if ((m.flags() & RdmMessage.PEER) != 0) {
                            end = EventNumber.CONNECTION_PEER_REJECTED;
                            pd = m.pd();
                        } else {
                            end = EventNumber.CONNECTION_NON_PEER_REJECTED;
                        }
                    }
                }
                case RdmMessage.RTU -> {
                    if (state == EpState.COMPLETION_PENDING) {
                        established(new byte[0]);
                    }
                }
                case RdmMessage.KEEPALIVE -> {
                    boolean linked = state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING;
                    if ((m.flags() & RdmMessage.PROBE) != 0 && linked) {
                        sendPeer(message(RdmMessage.KEEPALIVE, RdmMessage.ANSWER, null, 0));
                    }
                    if ((m.flags() & RdmMessage.ANSWER) != 0 && refusals.asked() && linked) {
                        refused = refusals.answered();
                        end = EventNumber.CONNECTION_BROKEN;
                    }
                }
                case RdmMessage.DISC, RdmMessage.ABORT -> {
                    if (state == EpState.COMPLETION_PENDING) {
                        end = EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR;
                    } else if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
                        end = EventNumber.CONNECTION_DISCONNECTED;
                    }
                    peerCtl = -1;
                }
                default -> {
                }
            }
        }
        if (refused >= 0) {
            LOG.debug("EP {}: the peer is connected and its side ended the transport: an RDMA Write or Read was refused", ep.id);
            ep.completed(refused, RdmRefusedRma.EACCES, 0); // REMOTE_ACCESS, and the connection breaks (afterCompletion)
        }
        if (end != null) {
            terminate(end, pd);
        }
    }

    @Override
    public void sendFailed(RdmChannel channel, int err, long src) {
        EventNumber end;
        synchronized (ep) {
            end = switch (state) {
                case ACTIVE_CONNECTION_PENDING -> err == 113 || err == 101 ? EventNumber.CONNECTION_UNREACHABLE
                        : EventNumber.CONNECTION_NON_PEER_REJECTED;
                case COMPLETION_PENDING -> EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR;
                case CONNECTED, DISCONNECT_PENDING -> EventNumber.CONNECTION_BROKEN;
                default -> null;
            };
        }
        LOG.debug("a control send of EP {} failed: {}", ep.id, Fi.get().strerror(err));
        if (end != null) {
            terminate(end, null);
        }
    }

    /** The EP is freed (its lock held): the peer is told, the endpoints go without an event. */
    @Override
    void release() {
        boolean linked = state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING
                || state == EpState.COMPLETION_PENDING;
        if (linked) {
            sendPeer(message(RdmMessage.DISC, 0, null, 0));
        }
        underCqLocks(ep.recvEvd(), ep.requestEvd(), this::closeData);
        closeControl();
        state = EpState.DISCONNECTED;
    }

    /**
     * The IA closes and this connection's EP was not freed (its free failed): its endpoints are closed
     * without telling the peer, so that their shm regions go with the IA.
     */
    void closeWithIa() {
        synchronized (ep) {
            data.close(true);
            closeControl();
        }
    }

    @Override
    void reset() {
        if (state != EpState.DISCONNECTED) {
            throw DatException.invalidState(subtype(state), "dat_ep_reset in " + state);
        }
        closeControl();
        state = EpState.UNCONNECTED;
        remote = null;
        remotePort = 0;
        peerConn = 0;
        peerCtl = -1;
    }
}
