package org.jdapl.provider.emu;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;

/**
 * An emulated Endpoint: the connection state machine of DAT and the two work queues of a reliable
 * connection. Every method runs under the fabric lock, so state changes, data movement and
 * event posting of both ends of a connection are ordered.
 *
 * <p>The request queue is processed in order: its head moves data (a send takes the peer's first
 * receive, an RDMA checks the peer's context and copies), completes, and the next follows. A send
 * that finds no receive waits up to {@link EmuLimits#RNR_RETRY_MILLIS} (as an RC queue pair's RNR
 * retries), then completes RECEIVER_NOT_READY. Any error completion breaks the connection as on RC:
 * both ends get CONNECTION_BROKEN and every later DTO is flushed. Entering DISCONNECTED flushes both
 * queues, so every posted DTO completes exactly once.
 *
 * <p>A graceful disconnect follows the NetworkDirect scheme: DISCONNECT_PENDING until the request
 * queue is empty, then a notification to the peer; the peer (if still connected) flushes, reports
 * DISCONNECTED and answers; the answer completes the local disconnect.
 */
public final class EmuEp extends EmuObject implements Endpoint {
    private final EmuIa ia;
    private final EmuSrq srq;
    private final boolean providerCreated;
    private volatile EmuPz pz;
    private EmuEvd recvEvd;
    private EmuEvd requestEvd;
    private EmuEvd connectEvd;
    private EpAttributes attributes;
    private EpState state;
    private long localPortQual;
    private SocketAddress remoteAddress;
    private long remotePortQual;
    private final ArrayDeque<WorkRequest.Recv> recvQueue = new ArrayDeque<>();
    private final ArrayDeque<WorkRequest> requestQueue = new ArrayDeque<>();
    private ConnectAttempt attempt;
    private EmuCr pendingRequest;
    private Link link;
    /** The link while it is being established (tcp: active side connecting, passive side accepted). */
    private Link pending;
    private boolean notifySent;
    private boolean peerNotified;
    private boolean pumpScheduled;
    private int srqBuffersUsed;
    private long srqBytesUsed;
    private int softHighWatermark = Dat.WATERMARK_INFINITE;
    private int hardHighWatermark = Dat.HW_DEFAULT;

    EmuEp(EmuIa ia, EmuPz pz, EmuEvd recvEvd, EmuEvd requestEvd, EmuEvd connectEvd, EmuSrq srq,
          EpAttributes attributes, EpState initial, boolean providerCreated) {
        super(HandleType.EP);
        this.ia = ia;
        this.pz = pz;
        this.srq = srq;
        this.attributes = attributes;
        this.state = initial;
        this.providerCreated = providerCreated;
        setEvds(recvEvd, requestEvd, connectEvd);
        if (pz != null) {
            pz.use();
        }
        if (srq != null) {
            srq.attach(this);
        }
    }

    private void setEvds(EmuEvd recv, EmuEvd request, EmuEvd connect) {
        for (EmuEvd e : new EmuEvd[] {recvEvd, requestEvd, connectEvd}) {
            if (e != null) {
                e.unuse();
            }
        }
        recvEvd = recv;
        requestEvd = request;
        connectEvd = connect;
        for (EmuEvd e : new EmuEvd[] {recvEvd, requestEvd, connectEvd}) {
            if (e != null) {
                e.use();
            }
        }
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuPz pz() {
        return pz;
    }

    EpState state() {
        return state;
    }

    ConnectAttempt attempt() {
        return attempt;
    }

    Link link() {
        return link;
    }

    // ---------------------------------------------------------------- queries

    @Override
    public EpParam query() {
        return ia.locked(() -> {
            checkLive();
            return new EpParam(ia, state, ia.address(), localPortQual, remoteAddress, remotePortQual, pz, recvEvd,
                    requestEvd, connectEvd, srq, attributes);
        });
    }

    @Override
    public EpStatus status() {
        return ia.locked(() -> {
            checkLive();
            return new EpStatus(state, recvQueue.isEmpty(), requestQueue.isEmpty());
        });
    }

    @Override
    public RecvQuery recvQuery() {
        return ia.locked(() -> {
            checkLive();
            if (srq == null) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                        "dat_ep_recv_query reports SRQ buffer use; this EP has no SRQ");
            }
            return new RecvQuery(srqBuffersUsed, (int) Math.min(Integer.MAX_VALUE, srqBytesUsed));
        });
    }

    @Override
    public void setWatermark(int soft, int hard) {
        ia.locked(() -> {
            checkLive();
            if (srq == null) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "watermarks apply to EPs with an SRQ");
            }
            if (soft < Dat.WATERMARK_INFINITE || hard < Dat.WATERMARK_INFINITE) {
                throw DatException.invalidParameter(2, "watermarks are -1 (infinite) or 0 and more");
            }
            softHighWatermark = soft;
            hardHighWatermark = hard;
        });
    }

    // ---------------------------------------------------------------- configuration

    @Override
    public void modify(EpAttributes newAttributes, EventDispatcher recv, EventDispatcher request,
                       EventDispatcher connect) {
        modify(null, newAttributes, recv, request, connect);
    }

    @Override
    public void modify(ProtectionZone newPz, EpAttributes newAttributes, EventDispatcher recv,
                       EventDispatcher request, EventDispatcher connect) {
        ia.locked(() -> {
            checkLive();
            if (state != EpState.UNCONNECTED && !(providerCreated && state == EpState.TENTATIVE_CONNECTION_PENDING)) {
                throw state.invalid("dat_ep_modify");
            }
            EmuPz z = newPz == null ? pz : ia.own(newPz, EmuPz.class, HandleType.PZ);
            EpAttributes attrs = newAttributes == null ? attributes : EmuLimits.checkEpAttributes(newAttributes, srq != null);
            EmuEvd r = recv == null ? recvEvd : ia.ownEvd(recv, DatReturnSubtype.INVALID_HANDLE_EVD_RECV);
            EmuEvd q = request == null ? requestEvd : ia.ownEvd(request, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST);
            EmuEvd c = connect == null ? connectEvd : ia.ownEvd(connect, DatReturnSubtype.INVALID_HANDLE_EVD_CONN);
            EmuEvd.checkStreams(r, q, c);
            if (z != pz) {
                if (srq != null && srq.pz() != z) {
                    throw new DatException(DatReturnType.PROTECTION_VIOLATION, DatReturnSubtype.NO_SUBTYPE,
                            "dat_ep_modify: the EP's SRQ belongs to another PZ");
                }
                z.use();
                if (pz != null) {
                    pz.unuse();
                }
                pz = z;
            }
            attributes = attrs;
            setEvds(r, q, c);
        });
    }

    /** Puts a freshly reserved EP in RESERVED (fabric lock held). */
    void reserve() {
        state = EpState.RESERVED;
    }

    /** The RSP was freed before a request arrived (fabric lock held). */
    void unreserve() {
        state = EpState.UNCONNECTED;
    }

    /** A request arrived for this reserved or provider-created EP (fabric lock held). */
    void requestArrived(EmuCr cr) {
        pendingRequest = cr;
        state = providerCreated ? EpState.TENTATIVE_CONNECTION_PENDING : EpState.PASSIVE_CONNECTION_PENDING;
    }

    /**
     * The request of this EP was rejected or handed off: a reserved EP is free again, a provider EP goes.
     *
     * <p>Behaviours: FREE_07.
     */
    void releaseRequest(EmuCr cr) {
        if (pendingRequest != cr) {
            return;
        }
        pendingRequest = null;
        if (providerCreated) {
            flushAll();
            detach();
            markFreed();
            ia.forget(this);
        } else {
            state = EpState.UNCONNECTED;
        }
    }

    // ---------------------------------------------------------------- connection establishment

    /**
     * Behaviours: CONN_01, CONN_02, CONN_08, CONN_09, CONN_12: the EP must be UNCONNECTED, the address
     * valid and the QoS supported; it goes ACTIVE_CONNECTION_PENDING with a local port.
     */
    @Override
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                        ConnectFlag flag) {
        do {
            ia.fabric().prepareConnect(ia, remote);
        } while (!ia.locked(() -> {
            checkLive();
            byte[] data = checkConnect(timeoutMicros, privateData, qos, flag);
            ia.fabric().checkRemoteAddress(remote);
            return startConnect(remote, connQual, false, timeoutMicros, data);
        }));
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos) {
        SocketAddress[] remote = new SocketAddress[1];
        do {
            if (remote[0] != null) {
                ia.fabric().prepareConnect(ia, remote[0]);
            }
        } while (!ia.locked(() -> {
            checkLive();
            EmuEp other = ia.own(dup, EmuEp.class, HandleType.EP);
            if (other.state != EpState.CONNECTED) {
                throw other.state.invalid("dat_ep_dup_connect of an EP that is not connected");
            }
            byte[] data = checkConnect(timeoutMicros, privateData, qos, ConnectFlag.DEFAULT);
            remote[0] = other.remoteAddress;
            return startConnect(other.remoteAddress, other.remotePortQual, false, timeoutMicros, data);
        }));
    }

    @Override
    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] privateData) {
        do {
            ia.fabric().prepareConnect(ia, remote);
        } while (!ia.locked(() -> {
            checkLive();
            byte[] data = checkConnect(timeoutMicros, privateData, Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
            ia.fabric().checkRemoteAddress(remote);
            int port = ((InetSocketAddress) remote).getPort();
            if (port == 0) {
                throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                        "a common connect names the CSP's port; " + remote + " has none");
            }
            return startConnect(remote, port, true, timeoutMicros, data);
        }));
    }

    /** Behaviours: CONN_01 (INVALID_STATE), CONN_09 (MODEL_NOT_SUPPORTED). */
    private byte[] checkConnect(long timeoutMicros, byte[] privateData, Qos qos, ConnectFlag flag) {
        if (state != EpState.UNCONNECTED) {
            throw state.invalid("dat_ep_connect");
        }
        if (qos == null || flag == null) {
            throw DatException.invalidParameter(qos == null ? 7 : 8, "QoS and connect flag must be given");
        }
        if (qos != Qos.BEST_EFFORT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the emulated provider supports only QoS "
                    + "BEST_EFFORT, not " + qos);
        }
        if (flag != ConnectFlag.DEFAULT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the emulated provider has no multipathing ("
                    + flag + ")");
        }
        if (timeoutMicros <= 0) {
            throw DatException.invalidParameter(4, "timeout " + timeoutMicros + " is not positive");
        }
        byte[] data = EmuLimits.privateData(privateData, 5);
        if (connectEvd == null) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_EVD_CONNECT,
                    "the EP has no connect EVD to report the outcome on");
        }
        return data;
    }

    /**
     * Starts the attempt (domain lock held).
     *
     * @return false, with nothing changed, if the loopback IA at {@code remote} is not in this IA's lock
     *         domain (it opened after {@link Fabric#prepareConnect}); the caller prepares again
     */
    private boolean startConnect(SocketAddress remote, long connQual, boolean common, long timeoutMicros,
                                 byte[] data) {
        if (!ia.fabric().canConnect(ia, remote)) {
            return false;
        }
        state = EpState.ACTIVE_CONNECTION_PENDING;
        localPortQual = ia.nextPortQual();
        remoteAddress = remote;
        remotePortQual = connQual;
        notifySent = false;
        peerNotified = false;
        ConnectAttempt a = new ConnectAttempt(this, data);
        attempt = a;
        ia.fabric().connect(a, remote, connQual, common, data, localPortQual);
        if (timeoutMicros < Dat.TIMEOUT_INFINITE) {
            a.setTimer(ia.schedule(TimeUnit.MICROSECONDS.toNanos(timeoutMicros),
                    () -> failAttempt(a, a.delivered ? EventNumber.CONNECTION_TIMED_OUT
                            : EventNumber.CONNECTION_UNREACHABLE)));
        }
        return true;
    }

    /**
     * Ends a live attempt with a failure event and DISCONNECTED (fabric lock held).
     *
     * <p>Behaviours: CONN_05, CONN_06, CONN_07: NON_PEER_REJECTED, UNREACHABLE, TIMED_OUT.
     */
    public void failAttempt(ConnectAttempt a, EventNumber outcome) {
        if (!a.isLive()) {
            return;
        }
        a.finish();
        attempt = null;
        goDisconnected(outcome, null);
    }

    /**
     * The peer rejected the request of a live attempt (fabric lock held).
     *
     * <p>Behaviours: CONN_04, CONN_13: PEER_REJECTED with the reject private data.
     */
    public void rejectedBy(ConnectAttempt a, byte[] privateData) {
        if (!a.isLive()) {
            return;
        }
        a.finish();
        attempt = null;
        goDisconnected(EventNumber.CONNECTION_PEER_REJECTED, privateData);
    }

    void checkCanAccept() {
        if (connectEvd == null) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_EVD_CONNECT,
                    "the EP has no connect EVD to report the connection on");
        }
    }

    /**
     * Accepts {@code cr} on this (passive) EP (domain lock held; the request is consumed): COMPLETION_PENDING
     * until the fabric establishes the connection, or DISCONNECTED with ACCEPT_COMPLETION_ERROR if the
     * active side no longer waits (CONN_03).
     */
    void acceptFrom(EmuCr cr, byte[] privateData) {
        pendingRequest = null;
        localPortQual = cr.connQual();
        remoteAddress = cr.remoteAddress();
        remotePortQual = cr.remotePortQual();
        notifySent = false;
        peerNotified = false;
        state = EpState.COMPLETION_PENDING;
        if (!cr.inbound().accept(this, privateData)) {
            goDisconnected(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, null);
        }
    }

    /** The fabric establishes {@code l} for this EP later (tcp: handshake in progress; domain lock held). */
    public void awaitEstablishment(Link l) {
        pending = l;
    }

    /**
     * The connection is established (domain lock held): CONNECTED, CONNECTION_EVENT_ESTABLISHED with the
     * peer's private data on the connect EVD (CONN_03, CONN_13), and requests may flow.
     */
    void established(Link l, byte[] privateData) {
        if (attempt != null) {
            attempt.finish();
            attempt = null;
        }
        pending = null;
        link = l;
        state = EpState.CONNECTED;
        postConnection(EventNumber.CONNECTION_ESTABLISHED, privateData);
        kick();
    }

    // ---------------------------------------------------------------- disconnect, reset, free

    /** Behaviours: DISC_01, DISC_04, DISC_05, DISC_06, DISC_10, DISC_11, DISC_12. */
    @Override
    public void disconnect(CloseFlag flag) {
        ia.locked(() -> {
            checkLive();
            if (flag == null) {
                throw DatException.invalidParameter(2, "no disconnect flag");
            }
            switch (state) {
                case DISCONNECTED -> {
                }
                case ACTIVE_CONNECTION_PENDING, COMPLETION_PENDING -> {
                    if (attempt != null) {
                        attempt.finish();
                        attempt = null;
                    }
                    goDisconnected(EventNumber.CONNECTION_DISCONNECTED, null);
                }
                case CONNECTED -> {
                    if (flag == CloseFlag.ABRUPT) {
                        abruptClose(true);
                    } else {
                        state = EpState.DISCONNECT_PENDING;
                        tryFinishGraceful();
                    }
                }
                case DISCONNECT_PENDING -> {
                    if (flag == CloseFlag.ABRUPT) {
                        abruptClose(true);
                    }
                }
                default -> throw state.invalid("dat_ep_disconnect");
            }
        });
    }

    boolean connectedState() {
        return state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING;
    }

    /**
     * Closes the connection at once: this EP and the peer end DISCONNECTED, their DTOs flushed.
     *
     * <p>Behaviours: DISC_02: abrupt, both ends DISCONNECTED, every outstanding DTO flushed.
     */
    private void abruptClose(boolean localEvent) {
        link.abort(this, false);
        goDisconnected(localEvent ? EventNumber.CONNECTION_DISCONNECTED : null, null);
    }

    /**
     * The peer ended the connection at once (abrupt disconnect, or a failure when {@code broken}).
     *
     * <p>Behaviours: DISC_13, DISC_14, DISC_17.
     */
    public void remoteAbort(boolean broken) {
        if (connectedState()) {
            goDisconnected(broken ? EventNumber.CONNECTION_BROKEN : EventNumber.CONNECTION_DISCONNECTED, null);
        }
    }

    /**
     * Breaks the connection as a transport failure does: both ends get CONNECTION_BROKEN.
     *
     * <p>Behaviours: DISC_03, DISC_17: an error completion breaks the connection; later DTOs are flushed.
     */
    public void breakLink() {
        Link l = link;
        if (l == null) {
            return;
        }
        l.abort(this, true);
        if (connectedState()) {
            goDisconnected(EventNumber.CONNECTION_BROKEN, null);
        }
    }

    /** The transport of {@code conn} failed (domain lock held): BROKEN (DISC_17), or the establishment fails. */
    public void transportFailed(Link conn) {
        if (link == conn) {
            if (connectedState()) {
                goDisconnected(EventNumber.CONNECTION_BROKEN, null);
            }
        } else if (pending == conn) {
            pending = null;
            if (state == EpState.COMPLETION_PENDING) {
                goDisconnected(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, null);
            }
        }
    }

    /**
     * The peer accepted the request of attempt {@code a} on {@code l} (active side, domain lock held).
     *
     * @return false if the attempt has ended meanwhile: the caller abandons the link
     */
    public boolean acceptedBy(ConnectAttempt a, Link l, byte[] acceptData) {
        if (!a.isLive() || state != EpState.ACTIVE_CONNECTION_PENDING || pending != l) {
            return false;
        }
        established(l, acceptData);
        return true;
    }

    /** The active side confirmed the connection this EP accepted on {@code l} (domain lock held). */
    public void confirmedBy(Link l) {
        if (pending == l && state == EpState.COMPLETION_PENDING) {
            established(l, null);
        }
    }

    public ArrayDeque<WorkRequest> requests() {
        return requestQueue;
    }

    EpAttributes attributes() {
        return attributes;
    }

    /** Whether data can move on this EP's connection now. */
    boolean linkOpen() {
        return connectedState() && link != null && link.isOpen();
    }

    /**
     * Behaviours: DISC_08, DISC_09, DISC_16: DISCONNECTED after every successful completion; no byte moves
     * afterwards; both queues flushed.
     */
    void goDisconnected(EventNumber event, byte[] privateData) {
        state = EpState.DISCONNECTED;
        if (link != null) {
            link.close();
        }
        if (pending != null) {
            Link c = pending;
            pending = null;
            c.abandon();
        }
        flushAll();
        if (event != null) {
            postConnection(event, privateData);
        }
    }

    /**
     * Once the request queue is empty, notify the peer; complete when the peer has answered.
     *
     * <p>Behaviours: DISC_04, DISC_15: graceful disconnect completes after the request queue drained and
     * the peer answered.
     */
    public void tryFinishGraceful() {
        if (state != EpState.DISCONNECT_PENDING || !requestQueue.isEmpty()) {
            return;
        }
        if (!notifySent) {
            notifySent = true;
            link.notifyDisconnect(this);
        }
        if (state == EpState.DISCONNECT_PENDING && peerNotified) {
            goDisconnected(EventNumber.CONNECTION_DISCONNECTED, null);
        }
    }

    /**
     * The peer's graceful disconnect notification (or its answer to ours) arrived.
     *
     * <p>Behaviours: DISC_13, DISC_14, DISC_15.
     */
    public void peerDisconnectNotification() {
        peerNotified = true;
        if (state == EpState.CONNECTED) {
            notifySent = true;
            link.notifyDisconnect(this);
            goDisconnected(EventNumber.CONNECTION_DISCONNECTED, null);
        } else if (state == EpState.DISCONNECT_PENDING) {
            tryFinishGraceful();
        }
    }

    /** Behaviours: DISC_18: a DISCONNECTED EP is reset to UNCONNECTED and can connect again. */
    @Override
    public void reset() {
        ia.locked(() -> {
            checkLive();
            if (state != EpState.DISCONNECTED) {
                throw state.invalid("dat_ep_reset");
            }
            flushAll();
            link = null;
            remoteAddress = null;
            remotePortQual = 0;
            localPortQual = 0;
            notifySent = false;
            peerNotified = false;
            state = EpState.UNCONNECTED;
        });
    }

    /** Behaviours: FREE_01, FREE_02, FREE_05. */
    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            if (state == EpState.RESERVED || state == EpState.PASSIVE_CONNECTION_PENDING
                    || state == EpState.TENTATIVE_CONNECTION_PENDING) {
                throw state.invalid("dat_ep_free");
            }
            teardown(false);
            ia.forget(this);
        });
    }

    /**
     * Destroys the EP whatever its state (fabric lock held): establishment is aborted, a connection
     * closed (the peer gets DISCONNECTED, or BROKEN when {@code broken}), outstanding DTOs flushed.
     * After this no event of the EP is posted anywhere.
     *
     * <p>Behaviours: FREE_03, FREE_04, FREE_06.
     */
    void teardown(boolean broken) {
        if (attempt != null) {
            attempt.finish();
            attempt = null;
        }
        if (linkOpen()) {
            if (broken) {
                breakLink();
            } else {
                abruptClose(false);
            }
        }
        if (pending != null) {
            Link c = pending;
            pending = null;
            c.abandon();
        }
        state = EpState.DISCONNECTED;
        flushAll();
        detach();
        markFreed();
    }

    private void detach() {
        setEvds(null, null, null);
        if (pz != null) {
            pz.unuse();
        }
        if (srq != null) {
            srq.detach(this);
        }
        ia.revokeEpScopeRmrs(this);
    }

    // ---------------------------------------------------------------- posting

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        postSendWithInvalidate(iov, cookie, flags, false, 0);
    }

    /** Behaviours: OBJ_07, LMR_04. */
    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        ia.locked(() -> {
            checkLive();
            DtoChecks.flags(flags, 3);
            requireConnected("dat_ep_post_send");
            WorkRequest.Send send = DtoChecks.send(this, iov, cookie, flags, invalidate, rmrContext);
            requireRequestSlot();
            requestQueue.addLast(send);
            kick();
        });
    }

    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        ia.locked(() -> {
            checkLive();
            DtoChecks.flags(flags, 4);
            if (srq != null) {
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        "the EP takes its receives from an SRQ; post them there");
            }
            WorkRequest.Recv r = DtoChecks.recv(this, iov, cookie, flags);
            if (recvQueue.size() >= attributes.maxRecvDtos()) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the EP holds " + attributes.maxRecvDtos() + " receives");
            }
            if (state == EpState.DISCONNECTED) {
                completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
                return;
            }
            recvQueue.addLast(r);
            receiveAvailable();
        });
    }

    /** A receive became available to this EP (its own or its SRQ's): the peer's sends may proceed. */
    void receiveAvailable() {
        if (linkOpen()) {
            link.receivePosted(this);
        }
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        postRdma(true, iov, null, cookie, remote, flags);
    }

    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (local == null) {
            throw DatException.invalidParameter(2, "no local RMR triplet");
        }
        postRdma(true, null, local, cookie, remote, flags);
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        postRdma(false, iov, null, cookie, remote, flags);
    }

    /** Behaviours: OBJ_08, LMR_04, LMR_06. */
    private void postRdma(boolean read, List<LmrTriplet> iov, RmrTriplet localTarget, long cookie, RmrTriplet remote,
                          Set<CompletionFlag> flags) {
        ia.locked(() -> {
            checkLive();
            DtoChecks.flags(flags, 5);
            requireConnected(read ? "dat_ep_post_rdma_read" : "dat_ep_post_rdma_write");
            WorkRequest.Rdma rdma = DtoChecks.rdma(this, read, iov, localTarget, cookie, remote, flags);
            requireRequestSlot();
            requestQueue.addLast(rdma);
            kick();
        });
    }

    /** {@code dat_rmr_bind} through this EP (fabric lock held). */
    int postBind(EmuRmr rmr, LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges,
                 VaType vaType, long cookie, Set<CompletionFlag> flags) {
        DtoChecks.flags(flags, 8);
        if (rmr.pz() != pz) {
            throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the RMR and the EP are of different PZs");
        }
        requireConnected("dat_rmr_bind");
        EmuRmr.Binding binding = length == 0 ? null
                : DtoChecks.binding(this, lmr, offset, length, privileges, vaType);
        requireRequestSlot();
        rmr.apply(binding);
        requestQueue.addLast(new WorkRequest.Bind(rmr, binding, cookie, flags));
        kick();
        return binding == null ? 0 : binding.context();
    }

    /** Behaviours: DISC_07: posting while DISCONNECT_PENDING (or not connected) fails INVALID_STATE. */
    private void requireConnected(String operation) {
        if (state != EpState.CONNECTED) {
            throw state.invalid(operation);
        }
    }

    private void requireRequestSlot() {
        if (requestQueue.size() >= attributes.maxRequestDtos()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the EP holds " + attributes.maxRequestDtos() + " outstanding requests");
        }
    }

    // ---------------------------------------------------------------- processing

    /**
     * Processes the request queue (fabric lock held). On an open connection the poster's thread moves
     * the data itself, with no hand-off to another thread: the loopback link copies into the peer's
     * memory, the tcp link writes the frames. Otherwise (a graceful disconnect waiting for its queue to
     * drain) the IA's thread makes one pass after the call returns; several kicks make one pass.
     */
    void kick() {
        if (linkOpen()) {
            pumpRequests();
            return;
        }
        if (!pumpScheduled) {
            pumpScheduled = true;
            ia.later(() -> {
                pumpScheduled = false;
                if (!isFreed()) {
                    pumpRequests();
                }
            });
        }
    }

    /** Processes the request queue in order as far as it can go now (fabric lock held). */
    public void pumpRequests() {
        Link l = link;
        if (l == null || !linkOpen()) {
            if (requestQueue.isEmpty()) {
                tryFinishGraceful();
            }
            return;
        }
        l.pump(this);
    }

    /** Completes the head request with an error and breaks the connection, as RC does. */
    public boolean fail(WorkRequest wr, DtoStatus status) {
        requestQueue.pollFirst();
        completeRequest(wr, status, 0);
        breakLink();
        return true;
    }

    WorkRequest.Recv nextReceive() {
        return srq != null ? srq.peek() : recvQueue.peekFirst();
    }

    void takeReceive() {
        if (srq != null) {
            WorkRequest.Recv r = srq.take();
            srqBuffersUsed++;
            srqBytesUsed += r.capacity;
        } else {
            recvQueue.pollFirst();
        }
    }

    /** Behaviours: DISC_02, DISC_08: every posted DTO and bind completes exactly once, FLUSHED. */
    private void flushAll() {
        WorkRequest wr;
        while ((wr = requestQueue.pollFirst()) != null) {
            if (wr instanceof WorkRequest.Bind bind) {
                bind.rmr.revokeIf(bind.binding);
            }
            completeRequest(wr, DtoStatus.FLUSHED, 0);
        }
        WorkRequest.Recv r;
        while ((r = recvQueue.pollFirst()) != null) {
            completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
        }
    }

    public void completeRequest(WorkRequest wr, DtoStatus status, long length) {
        wr.markCompleted();
        if (requestEvd == null || (status == DtoStatus.SUCCESS && wr.has(CompletionFlag.SUPPRESS))) {
            return;
        }
        DatEvent event = wr instanceof WorkRequest.Bind bind
                ? new DatEvent.RmrBindCompletion(requestEvd, bind.rmr, wr.cookie, status)
                : new DatEvent.DtoCompletion(requestEvd, this, wr.cookie, status, length, wr.operation(), 0);
        ia.post(requestEvd, event, !wr.has(CompletionFlag.UNSIGNALLED));
    }

    public void completeRecv(WorkRequest.Recv r, DtoStatus status, long length, DtoOperation op, int rmrContext) {
        r.markCompleted();
        if (recvEvd == null || (status == DtoStatus.SUCCESS && r.has(CompletionFlag.SUPPRESS))) {
            return;
        }
        ia.post(recvEvd, new DatEvent.DtoCompletion(recvEvd, this, r.cookie, status, length, op, rmrContext),
                !r.has(CompletionFlag.UNSIGNALLED));
    }

    void postConnection(EventNumber number, byte[] privateData) {
        if (connectEvd != null && !isFreed()) {
            ia.post(connectEvd, new DatEvent.Connection(connectEvd, number, this, privateData), true);
        }
    }
}
