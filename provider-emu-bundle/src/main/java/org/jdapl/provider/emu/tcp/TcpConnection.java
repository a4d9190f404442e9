package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.EventNumber;
import org.jdapl.provider.emu.ConnectAttempt;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.Inbound;
import org.jdapl.provider.emu.Link;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection of the emulated provider's {@code tcp} fabric: the socket, its phase and its
 * lifecycle (selector interest, close, linger, keepalive and silence, failure), and the {@link Link}
 * its EP sees. The connection's jobs are its parts, each a class along PROTOCOL.md: the input
 * ({@link TcpInput}: read, decode, deliver) hands every frame straight to the handshake
 * ({@link TcpHandshake}) until the connection is open, then to the reliable-connection engine
 * ({@link TcpRcEngine}), made then with what it needs; both write their frames straight to the output
 * ({@link TcpOutput}: queue, encode, write), which tells the connection how its writes went.
 * Everything runs under the domain lock of the IA; socket I/O is non-blocking, reads happen on the
 * IA's I/O thread (or a polling consumer's), writes on whichever thread has frames to send. A frame
 * that breaks the protocol drops the connection with a logged reason (the EP, if any, reports BROKEN).
 */
public final class TcpConnection extends Link implements Inbound, TcpOutput.Socket {
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
    private static final int SMALL_BUFFER = 2 << 10;
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);

    enum Phase {
        /** Active side: the TCP connect is under way. */
        CONNECTING,
        /** Active side: the connect request is sent, the answer awaited. */
        REQUESTED,
        /** Passive side: waiting for the connect request. */
        LISTENING,
        /** Passive side: the request was delivered to a service point, the consumer's answer awaited. */
        OFFERED,
        /** Passive side: accepted, the active side's RTU awaited. */
        ACCEPTED,
        /** Established: data frames flow. */
        OPEN,
        /** Ending: pending output is sent, input is discarded until the peer closes or the linger ends. */
        CLOSING,
        /** Gone. */
        CLOSED
    }

    private final TcpFabric fabric;
    private final EmuIa ia;
    private final SocketChannel channel;
    private SelectionKey key;
    private Phase phase;
    private String remoteLabel = "?";
    /** The connect request, its delivery and answer (PROTOCOL.md, Connection establishment). */
    private final TcpHandshake handshake;
    // established
    private EmuEp ep;
    // output
    private final TcpOutput out;
    // input
    private final TcpInput input;
    private long closeDeadline;
    /** The reliable-connection engine of the established connection (null until it is). */
    private TcpRcEngine rc;
    private final long created = System.nanoTime();

    /** An active connection for {@code attempt}. */
    TcpConnection(TcpFabric fabric, SocketChannel channel, java.net.SocketAddress remote, ConnectAttempt attempt,
                  long connQual, boolean common, byte[] requestData, long portQual) {
        this.fabric = fabric;
        this.ia = fabric.ia();
        this.channel = channel;
        this.out = new TcpOutput(this, channel, fabric::clock, SMALL_BUFFER);
        this.input = new TcpInput(this, fabric, channel, SMALL_BUFFER);
        this.handshake = new TcpHandshake(this, out, input, attempt, connQual, common, requestData, portQual);
        input.handTo(handshake);
        this.ep = attempt.ep;
        this.phase = Phase.CONNECTING;
        this.remoteLabel = String.valueOf(remote);
    }

    /** A passive connection accepted on the IA's listener ({@code commonPort} 0) or a CSP's. */
    TcpConnection(TcpFabric fabric, SocketChannel channel, int commonPort) {
        this.fabric = fabric;
        this.ia = fabric.ia();
        this.channel = channel;
        this.out = new TcpOutput(this, channel, fabric::clock, SMALL_BUFFER);
        this.input = new TcpInput(this, fabric, channel, SMALL_BUFFER);
        this.handshake = new TcpHandshake(this, out, input, commonPort);
        input.handTo(handshake);
        this.phase = Phase.LISTENING;
        try {
            remoteLabel = String.valueOf(channel.getRemoteAddress());
        } catch (IOException e) {
            remoteLabel = "an unknown peer";
        }
    }

    // ------------------------------------------------------------------ for the handshake and the input

    EmuEp ep() {
        return ep;
    }

    EmuIa ia() {
        return ia;
    }

    TcpFabric fabric() {
        return fabric;
    }

    String remoteLabel() {
        return remoteLabel;
    }

    String name() {
        return ia.name();
    }

    void register(SelectionKey k) {
        key = k;
    }

    SelectionKey key() {
        return key;
    }

    Phase phase() {
        return phase;
    }

    /** Whether the connection is ending: nothing received is acted on any more. */
    boolean ending() {
        return phase == Phase.CLOSING || phase == Phase.CLOSED;
    }

    /** Established, no output waits for the socket or for queue room, and small frames are expected. */
    boolean onlyReads() {
        return phase == Phase.OPEN && !out.waitsForSocket() && out.hasRoom() && !input.expectsLarge();
    }

    boolean identified() {
        return phase != Phase.LISTENING;
    }

    void phase(Phase p) {
        phase = p;
    }

    SocketChannel channel() {
        return channel;
    }

    /** The EP of this connection: the active EP, or the passive EP once it accepted (null once abandoned). */
    void owner(EmuEp e) {
        ep = e;
    }

    /**
     * The handshake is done: data frames flow, with full-size buffers, from the input straight to the
     * EP's engine, which writes its frames straight to the output.
     */
    void opened() {
        phase = Phase.OPEN;
        open = true;
        rc = new TcpRcEngine(ep, ia, ia.contexts(), out, input, () -> fabric.flushLater(this), this::peerAbort,
                remoteLabel);
        input.open(rc);
        out.grow();
    }

    // ------------------------------------------------------------------ Link

    /** The local EP is DISCONNECTED: no byte moves any more; the transport closes once its output is sent. */
    @Override
    public void close() {
        open = false;
        completeInbound();
        beginClose();
    }

    private void completeInbound() {
        if (rc != null) {
            rc.completeInbound();
        }
    }

    @Override
    public void abort(EmuEp from, boolean broken) {
        if (phase == Phase.OPEN) {
            out.dropAllButAnswers();
            out.enqueue(out.frame().abort(broken ? Frame.Abort.BROKEN : Frame.Abort.DISCONNECT, null));
            flush();
        }
    }

    @Override
    public void notifyDisconnect(EmuEp from) {
        if (phase == Phase.OPEN) {
            out.enqueue(out.frame().disconnect());
            flush();
        }
    }

    @Override
    public void receivePosted(EmuEp from) {
        if (phase == Phase.OPEN && open) {
            rc.receivePosted();
        }
    }

    // ------------------------------------------------------------------ establishment

    /** The TCP connect completed (or failed) on the I/O thread. */
    void onConnectable() {
        handshake.onConnectable();
    }

    /** The TCP connection is up: send the connect request ({@link TcpHandshake#connected}). */
    void connected() {
        handshake.connected();
    }

    /**
     * {@code dat_cr_accept} of the request on this connection by {@code passive}.
     *
     * @return false if the active side is gone (the EP reports ACCEPT_COMPLETION_ERROR)
     */
    @Override
    public boolean accept(EmuEp passive, byte[] privateData) {
        return handshake.accept(passive, privateData);
    }

    @Override
    public void delivered() {
        // the active side learns of the delivery from the peer's frames
    }

    @Override
    public void reject(byte[] privateData) {
        handshake.reject(Frame.Reject.PEER, privateData);
    }

    @Override
    public void refuse(String reason) {
        handshake.reject(Frame.Reject.NON_PEER, reason.getBytes(StandardCharsets.UTF_8));
    }

    /** The EP no longer wants this connection while it is being established (timed out, disconnected, freed). */
    @Override
    public void abandon() {
        handshake.abandon();
    }

    // ------------------------------------------------------------------ sending requests

    /** Transmits the EP's untransmitted requests in order as far as they may go (fabric lock held). */
    @Override
    public void pump(EmuEp from) {
        if (phase != Phase.OPEN || !open || ep != from) {
            return;
        }
        rc.pump(from);
    }

    // ------------------------------------------------------------------ output

    /** Writes as much queued output as the socket takes now (fabric lock held). */
    void flush() {
        out.flush();
    }

    @Override
    public boolean canWrite() {
        return phase != Phase.CLOSED && phase != Phase.CONNECTING;
    }

    @Override
    public void written(boolean all, boolean waitChanged) {
        if (all) {
            fabric.answered(this);
            if (phase == Phase.CLOSING && !channel.socket().isOutputShutdown()) {
                try {
                    channel.shutdownOutput();
                } catch (IOException e) {
                    writeFailed(e);
                    return;
                }
            }
        }
        if (waitChanged) {
            updateInterest();
            if (!all) {
                fabric.wakeup();
            }
        }
    }

    @Override
    public void writeFailed(Exception e) {
        fail("write failed: " + e, false);
    }

    /** Sets the selector interest: reads unless transfers of the IA are held, writes while output waits. */
    void updateInterest() {
        if (key == null || !key.isValid()) {
            return;
        }
        int ops;
        if (phase == Phase.CONNECTING) {
            ops = SelectionKey.OP_CONNECT;
        } else {
            boolean read = !(phase == Phase.OPEN && ia.held()) && out.hasRoom();
            ops = (read ? SelectionKey.OP_READ : 0) | (out.waitsForSocket() ? SelectionKey.OP_WRITE : 0);
        }
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    // ------------------------------------------------------------------ input

    /** The socket has bytes (I/O thread, domain lock held): see {@link TcpInput#onReadable}. */
    void onReadable() {
        input.onReadable();
    }

    /** The peer's ABORT (from the handshake or the engine, whichever has the connection's frames). */
    void peerAbort(Frame h, byte[] control) {
        String reason = control == null || control.length == 0 ? "" : new String(control, StandardCharsets.UTF_8);
        boolean broken = h.abort() == Frame.Abort.BROKEN;
        LOG.debug("IA {}: {} from {} {}", ia.name(), broken ? "broken" : "abort", remoteLabel, reason);
        if (phase == Phase.OPEN) {
            EmuEp owner = ep;
            open = false;
            completeInbound();
            beginClose();
            owner.connection().remoteAbort(broken);
        } else {
            handshake.peerAbort();
        }
    }

    // ------------------------------------------------------------------ ending

    /** Starts an orderly end: output already queued is sent, then input is discarded until EOF or the linger. */
    void beginClose() {
        if (phase == Phase.CLOSING || phase == Phase.CLOSED) {
            return;
        }
        if (phase == Phase.CONNECTING) {
            shutdown();
            return;
        }
        phase = Phase.CLOSING;
        open = false;
        input.dropFrame();
        closeDeadline = System.nanoTime() + LINGER_NANOS;
        flush();
        updateInterest();
    }

    /**
     * The transport failed or the peer broke the protocol (fabric lock held): the connection is closed at
     * once and its EP reports BROKEN (or its establishment fails).
     */
    void fail(String reason, boolean violation) {
        if (phase == Phase.CLOSED) {
            return;
        }
        Phase was = phase;
        if (violation) {
            LOG.warn("IA {}: dropping the connection with {}: {}", ia.name(), remoteLabel, reason);
        } else {
            LOG.debug("IA {}: connection with {} ended: {}", ia.name(), remoteLabel, reason);
        }
        open = false;
        EmuEp owner = ep;
        if (owner != null) {
            completeInbound();
        }
        shutdown();
        switch (was) {
            case CONNECTING, REQUESTED -> handshake.attemptFailed(was == Phase.CONNECTING
                    ? EventNumber.CONNECTION_UNREACHABLE : EventNumber.CONNECTION_NON_PEER_REJECTED);
            case OFFERED -> handshake.requestDied();
            case ACCEPTED, OPEN -> {
                if (owner != null) {
                    owner.connection().transportFailed(this);
                }
            }
            default -> {
            }
        }
    }

    /** Closes the socket and releases the buffers now. */
    void shutdown() {
        if (phase == Phase.CLOSED) {
            return;
        }
        phase = Phase.CLOSED;
        open = false;
        out.clear();
        if (key != null) {
            // The key can outlive the connection (its selector deregisters it at its next select or
            // close, and a handle of the closed IA keeps the selector reachable): it must not keep this
            // connection and its buffers reachable.
            key.cancel();
            key.attach(null);
        }
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("closing a connection of IA {}: {}", ia.name(), e.toString());
        }
        fabric.removed(this);
    }

    /** Keepalive, silence and linger checks (I/O thread, fabric lock held). */
    void tick(long now) {
        switch (phase) {
            case CLOSED, CONNECTING -> {
            }
            case CLOSING -> {
                if (now - closeDeadline >= 0) {
                    shutdown();
                }
            }
            case LISTENING -> {
                if (now - created > TcpFabric.IDLE_TIMEOUT_NANOS) {
                    LOG.warn("IA {}: dropping the connection with {}: no connect request within {} ms", ia.name(),
                            remoteLabel, TimeUnit.NANOSECONDS.toMillis(TcpFabric.IDLE_TIMEOUT_NANOS));
                    shutdown();
                }
            }
            default -> {
                if (!(phase == Phase.OPEN && ia.held()) && now - input.lastRead() > TcpFabric.IDLE_TIMEOUT_NANOS) {
                    long silent = TimeUnit.NANOSECONDS.toMillis(now - input.lastRead());
                    fail("the peer was silent for " + silent + " ms", false);
                    return;
                }
                if (now - out.lastWrite() > TcpFabric.KEEPALIVE_NANOS && out.queued() == 0) {
                    out.enqueue(out.frame().keepalive());
                    flush();
                }
            }
        }
    }

    /** Breaks the transport abruptly (a reset), as a cut cable or a dead peer process does (test hook). */
    public void reset() {
        try {
            channel.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException e) {
            LOG.debug("SO_LINGER: {}", e.toString());
        }
        fail("the transport was reset", false);
    }

    @Override
    public String toString() {
        return "TcpConnection[" + ia.name() + " <-> " + remoteLabel + ", " + phase + "]";
    }
}
