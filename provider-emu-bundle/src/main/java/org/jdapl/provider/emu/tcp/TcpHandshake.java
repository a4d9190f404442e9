package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.jdapl.dat.EventNumber;
import org.jdapl.provider.emu.ConnectAttempt;
import org.jdapl.provider.emu.EmuEp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection handshake of one {@link TcpConnection} (PROTOCOL.md, Connection establishment):
 * the active side's connect request, the passive side's delivery to a service point and the
 * consumer's accept or reject, the RTU that opens the connection, and the outcome each side's EP
 * reports. Runs under the domain lock of the connection's IA, as the connection does.
 *
 * <p>Behaviours: CONN_03, CONN_04, CONN_05, CONN_06, CONN_13 on the tcp fabric.
 */
final class TcpHandshake implements TcpInput.Handler {
    private static final Logger LOG = LoggerFactory.getLogger(TcpHandshake.class);

    private final TcpConnection c;
    private final TcpOutput out;
    private final TcpInput in;
    // active side
    private final ConnectAttempt attempt;
    private final long connQual;
    private final boolean common;
    private final byte[] requestData;
    private final long portQual;
    // passive side
    private final int commonPort;
    private boolean requestDead;

    /** The active side's handshake for {@code attempt}. */
    TcpHandshake(TcpConnection c, TcpOutput out, TcpInput in, ConnectAttempt attempt, long connQual, boolean common,
                 byte[] requestData, long portQual) {
        this.c = c;
        this.out = out;
        this.in = in;
        this.attempt = attempt;
        this.connQual = connQual;
        this.common = common;
        this.requestData = requestData;
        this.portQual = portQual;
        this.commonPort = 0;
    }

    /** The passive side's handshake on the IA's listener ({@code commonPort} 0) or a CSP's. */
    TcpHandshake(TcpConnection c, TcpOutput out, TcpInput in, int commonPort) {
        this.c = c;
        this.out = out;
        this.in = in;
        this.attempt = null;
        this.connQual = 0;
        this.common = false;
        this.requestData = null;
        this.portQual = 0;
        this.commonPort = commonPort;
    }

    /** The TCP connect completed (or failed) on the I/O thread. */
    void onConnectable() {
        try {
            if (!c.channel().finishConnect()) {
                return;
            }
        } catch (IOException e) {
            LOG.debug("IA {}: connect failed: {}", c.name(), e.toString());
            failEstablishment(EventNumber.CONNECTION_UNREACHABLE);
            return;
        }
        connected();
    }

    /** The TCP connection is up: send the connect request. */
    void connected() {
        if (c.phase() != TcpConnection.Phase.CONNECTING) {
            return;
        }
        c.phase(TcpConnection.Phase.REQUESTED);
        in.touch();
        int listenPort = c.fabric().address().getPort();
        byte[] payload = new byte[2 + requestData.length];
        payload[0] = (byte) (listenPort >>> 8);
        payload[1] = (byte) listenPort;
        System.arraycopy(requestData, 0, payload, 2, requestData.length);
        out.enqueue(out.frame().connectRequest(Frame.VERSION, connQual, portQual, common, payload));
        c.updateInterest();
        out.flush();
    }

    /**
     * {@code dat_cr_accept} of the request on this connection by {@code passive}.
     *
     * @return false if the active side is gone (the EP reports ACCEPT_COMPLETION_ERROR)
     */
    boolean accept(EmuEp passive, byte[] privateData) {
        if (c.phase() != TcpConnection.Phase.OFFERED || requestDead) {
            return false;
        }
        c.owner(passive);
        c.phase(TcpConnection.Phase.ACCEPTED);
        out.enqueue(out.frame().connectAccept(passive.query().localPortQual(), privateData));
        out.flush();
        if (c.phase() != TcpConnection.Phase.ACCEPTED) {
            return false;
        }
        passive.connection().awaitEstablishment(c);
        return true;
    }

    /** {@code dat_cr_reject} (PEER) or a refusal by the provider (NON_PEER, payload a reason). */
    void reject(Frame.Reject status, byte[] payload) {
        if (c.phase() == TcpConnection.Phase.OFFERED || c.phase() == TcpConnection.Phase.LISTENING) {
            byte[] data = payload.length > Frame.MAX_PRIVATE_DATA
                    ? Arrays.copyOf(payload, Frame.MAX_PRIVATE_DATA) : payload;
            out.enqueue(out.frame().connectReject(status, data));
            out.flush();
        }
        c.beginClose();
    }

    /** The EP no longer wants this connection while it is being established (timed out, disconnected, freed). */
    void abandon() {
        c.owner(null);
        switch (c.phase()) {
            case CONNECTING -> c.shutdown();
            case REQUESTED, ACCEPTED -> {
                out.enqueue(out.frame().abort(Frame.Abort.DISCONNECT, null));
                out.flush();
                c.beginClose();
            }
            default -> c.beginClose();
        }
    }

    /** The establishment failed on the active side: the socket closes, the live attempt ends with {@code outcome}. */
    void failEstablishment(EventNumber outcome) {
        c.shutdown();
        attemptFailed(outcome);
    }

    /** Ends the live attempt (if any) with {@code outcome} (CONN_05, CONN_06, CONN_07). */
    void attemptFailed(EventNumber outcome) {
        ConnectAttempt a = attempt;
        if (a != null && a.isLive()) {
            a.ep.connection().failAttempt(a, outcome);
        }
    }

    /** The peer aborted the connection before it was open. */
    void peerAbort() {
        switch (c.phase()) {
            case REQUESTED -> failEstablishment(EventNumber.CONNECTION_NON_PEER_REJECTED);
            case OFFERED -> {
                requestDead = true;
                c.beginClose();
            }
            case ACCEPTED -> {
                EmuEp owner = c.ep();
                c.beginClose();
                if (owner != null) {
                    owner.connection().transportFailed(c);
                }
            }
            default -> {
            }
        }
    }

    /** The transport failed while the consumer still had the request: a later accept fails. */
    void requestDied() {
        requestDead = true;
    }

    /** Fails the connection: the peer broke the protocol (TcpInput drops the connection). */
    private static void violation(String reason) throws Frame.ProtocolException {
        throw new Frame.ProtocolException(reason);
    }

    /** A checked header arrived before the connection is open; decides where its payload goes. */
    @Override
    public void header(Frame h) throws Frame.ProtocolException {
        FrameType type = h.type();
        switch (c.phase()) {
            case LISTENING -> {
                if (type != FrameType.CONNECT_REQ) {
                    violation(type + " before a connect request");
                }
                if (h.magic() != Frame.MAGIC) {
                    violation("a connect request without the protocol's magic");
                }
                in.expectControl();
            }
            case REQUESTED -> {
                switch (type) {
                    case CONNECT_DELIVERED -> {
                        if (attempt.isLive()) {
                            attempt.delivered = true;
                        }
                    }
                    case CONNECT_ACCEPT, CONNECT_REJECT, ABORT -> in.expectControl();
                    default -> violation(type + " while a connect request is unanswered");
                }
            }
            case OFFERED -> {
                if (type != FrameType.ABORT) {
                    violation(type + " while the connect request waits for the consumer");
                }
                in.expectControl();
            }
            case ACCEPTED -> {
                if (type == FrameType.ABORT) {
                    in.expectControl();
                } else if (type != FrameType.CONNECT_RTU) {
                    violation(type + " while the accept waits for the RTU");
                }
            }
            default -> {
            }
        }
    }

    /** A frame of the handshake is complete (its control data in {@code control}). */
    @Override
    public void frameEnd(Frame h, byte[] control) {
        switch (h.type()) {
            case ABORT -> c.peerAbort(h, control);
            case CONNECT_REQ -> connectRequest(h, control);
            case CONNECT_ACCEPT -> {
                ConnectAttempt a = attempt;
                EmuEp owner = c.ep();
                if (owner != null && owner.connection().acceptedBy(a, c, control)) {
                    c.opened();
                    out.enqueue(out.frame().connectRtu());
                    out.flush();
                } else {
                    abandon();
                }
            }
            case CONNECT_REJECT -> {
                ConnectAttempt a = attempt;
                c.shutdown();
                if (a.isLive()) {
                    if (h.reject() == Frame.Reject.PEER) {
                        a.ep.connection().rejectedBy(a, control);
                    } else {
                        LOG.info("IA {}: connect to {} refused by the peer: {}", c.name(), c.remoteLabel(),
                                new String(control, StandardCharsets.UTF_8));
                        a.ep.connection().failAttempt(a, EventNumber.CONNECTION_NON_PEER_REJECTED);
                    }
                }
            }
            case CONNECT_RTU -> {
                c.opened();
                c.ep().connection().confirmedBy(c);
            }
            default -> {
            }
        }
    }

    private void connectRequest(Frame h, byte[] payload) {
        int listenPort = ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
        byte[] privateData = Arrays.copyOfRange(payload, 2, payload.length);
        if (h.version() != Frame.VERSION) {
            String reason = "protocol version " + h.version() + " is not spoken here (version " + Frame.VERSION + ")";
            LOG.warn("IA {}: connect request from {} refused: {}", c.name(), c.remoteLabel(), reason);
            reject(Frame.Reject.NON_PEER, reason.getBytes(StandardCharsets.UTF_8));
            return;
        }
        boolean commonRequest = h.common();
        if (commonRequest != (commonPort != 0) || (commonRequest && h.connQual() != commonPort)) {
            reject(Frame.Reject.NON_PEER, "no common service point on this port".getBytes(StandardCharsets.UTF_8));
            return;
        }
        InetSocketAddress from;
        try {
            from = new InetSocketAddress(((InetSocketAddress) c.channel().getRemoteAddress()).getAddress(), listenPort);
        } catch (IOException e) {
            c.fail("the peer's address is unknown: " + e, false);
            return;
        }
        if (h.ud()) {
            c.fabric().datagrams().requested(c, from, (int) h.activePortQual(), h.connQual(), privateData);
            return;
        }
        c.phase(TcpConnection.Phase.OFFERED);
        if (!c.ia().deliverRequest(c, h.connQual(), commonRequest, privateData, from, h.activePortQual())) {
            c.phase(TcpConnection.Phase.LISTENING);
            reject(Frame.Reject.NON_PEER, ("nothing listens on connection qualifier " + h.connQual()
                    + " or its backlog is full").getBytes(StandardCharsets.UTF_8));
            return;
        }
        if (c.phase() == TcpConnection.Phase.OFFERED) {
            out.enqueue(out.frame().connectDelivered());
            out.flush();
        }
    }
}
