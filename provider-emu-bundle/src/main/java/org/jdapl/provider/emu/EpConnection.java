package org.jdapl.provider.emu;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.Qos;

/**
 * The connection state machine of one EP: establishment (connect, accept, the attempt and its
 * timer) and disconnect (graceful, abrupt, broken), with the addresses and the {@link Link} of the
 * connection. Every method runs under the EP's lock domain. Entering DISCONNECTED closes the link
 * and flushes both work queues of the EP, so every posted DTO completes exactly once.
 *
 * <p>A graceful disconnect follows the NetworkDirect scheme: DISCONNECT_PENDING until the request
 * queue is empty, then a notification to the peer; the peer (if still connected) flushes, reports
 * DISCONNECTED and answers; the answer completes the local disconnect.
 */
public final class EpConnection {
    private final EmuEp ep;
    private final EmuIa ia;
    volatile EpState state;
    long localPortQual;
    SocketAddress remoteAddress;
    long remotePortQual;
    private ConnectAttempt attempt;
    EmuCr pendingRequest;
    private Link link;
    /** The link while it is being established (tcp: active side connecting, passive side accepted). */
    private Link pending;
    private boolean notifySent;
    private boolean peerNotified;

    EpConnection(EmuEp ep, EmuIa ia, EpState initial) {
        this.ep = ep;
        this.ia = ia;
        this.state = initial;
    }

    public EpState state() {
        return state;
    }

    ConnectAttempt attempt() {
        return attempt;
    }

    Link link() {
        return link;
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
        state = ep.providerCreated() ? EpState.TENTATIVE_CONNECTION_PENDING : EpState.PASSIVE_CONNECTION_PENDING;
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
        if (ep.providerCreated()) {
            ep.queues().flush();
            ep.detach();
            ep.markFreed();
            ia.forget(ep);
        } else {
            state = EpState.UNCONNECTED;
        }
    }

    // ---------------------------------------------------------------- connection establishment

    /**
     * Behaviours: CONN_01, CONN_02, CONN_08, CONN_09, CONN_12: the EP must be UNCONNECTED, the address
     * valid and the QoS supported; it goes ACTIVE_CONNECTION_PENDING with a local port.
     */
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                        ConnectFlag flag) {
        do {
            ia.fabric().prepareConnect(ia, remote);
        } while (!ia.locked(() -> {
            ep.checkLive();
            byte[] data = checkConnect(timeoutMicros, privateData, qos, flag);
            ia.fabric().checkRemoteAddress(remote);
            return startConnect(remote, connQual, false, timeoutMicros, data);
        }));
    }

    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos) {
        SocketAddress[] remote = new SocketAddress[1];
        do {
            if (remote[0] != null) {
                ia.fabric().prepareConnect(ia, remote[0]);
            }
        } while (!ia.locked(() -> {
            ep.checkLive();
            EmuEp other = ia.own(dup, EmuEp.class, HandleType.EP);
            if (other.connection().state != EpState.CONNECTED) {
                throw other.connection().state.invalid("dat_ep_dup_connect of an EP that is not connected");
            }
            byte[] data = checkConnect(timeoutMicros, privateData, qos, ConnectFlag.DEFAULT);
            remote[0] = other.connection().remoteAddress;
            EpConnection o = other.connection();
            return startConnect(o.remoteAddress, o.remotePortQual, false, timeoutMicros, data);
        }));
    }

    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] privateData) {
        do {
            ia.fabric().prepareConnect(ia, remote);
        } while (!ia.locked(() -> {
            ep.checkLive();
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
        if (ep.evds().connect() == null) {
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
        ConnectAttempt a = new ConnectAttempt(ep, data);
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
        if (ep.evds().connect() == null) {
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
        if (!cr.inbound().accept(ep, privateData)) {
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
        ep.evds().connection(EventNumber.CONNECTION_ESTABLISHED, privateData);
        ep.kick();
    }


    /** Behaviours: DISC_01, DISC_04, DISC_05, DISC_06, DISC_10, DISC_11, DISC_12. */
    public void disconnect(CloseFlag flag) {
        ia.locked(() -> {
            ep.checkLive();
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
        link.abort(ep, false);
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
        l.abort(ep, true);
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


    /** Whether data can move on this EP's connection now. */
    public boolean linkOpen() {
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
        ep.queues().flush();
        if (event != null) {
            ep.evds().connection(event, privateData);
        }
    }

    /**
     * Once the request queue is empty, notify the peer; complete when the peer has answered.
     *
     * <p>Behaviours: DISC_04, DISC_15: graceful disconnect completes after the request queue drained and
     * the peer answered.
     */
    public void tryFinishGraceful() {
        if (state != EpState.DISCONNECT_PENDING || !ep.requests().isEmpty()) {
            return;
        }
        if (!notifySent) {
            notifySent = true;
            link.notifyDisconnect(ep);
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
            link.notifyDisconnect(ep);
            goDisconnected(EventNumber.CONNECTION_DISCONNECTED, null);
        } else if (state == EpState.DISCONNECT_PENDING) {
            tryFinishGraceful();
        }
    }


    /** Behaviours: DISC_18: a DISCONNECTED EP is reset to UNCONNECTED (its queues flushed) and can connect again. */
    void reset() {
        if (state != EpState.DISCONNECTED) {
            throw state.invalid("dat_ep_reset");
        }
        ep.queues().flush();
        link = null;
        remoteAddress = null;
        remotePortQual = 0;
        localPortQual = 0;
        notifySent = false;
        peerNotified = false;
        state = EpState.UNCONNECTED;
    }

    /**
     * Ends the connection whatever its state as the EP is destroyed: establishment is aborted, a
     * connection closed (the peer gets DISCONNECTED, or BROKEN when {@code broken}); the EP is
     * DISCONNECTED and keeps no link. The caller flushes the queues.
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
        // A handle the consumer still holds keeps no connection (on tcp, its buffers) reachable.
        link = null;
    }
}
