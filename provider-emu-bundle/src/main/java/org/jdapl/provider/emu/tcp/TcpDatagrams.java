package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Set;

import org.jdapl.dat.LmrTriplet;
import org.jdapl.provider.emu.EmuAh;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.EmuUdEp;
import org.jdapl.provider.emu.Segments;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tcp connection of one UD exchange (PROTOCOL.md, "Datagrams"): the active side sends CONNECT_REQ
 * with {@link Frame#FLAG_UD} and its qpn; the passive IA's listener hands the connection over to this
 * class ({@link Exchanges#requested}), which offers the request to the consumer PSP on the
 * qualifier as IB_UD_CONNECTION_REQUEST. The consumer's accept answers CONNECT_ACCEPT with the
 * passive qpn, its reject CONNECT_REJECT (PEER); nobody listening is CONNECT_REJECT (NON_PEER), and
 * the active side reports IB_UD_CONNECTION_ERROR for it, for a refused connect and for a transport
 * that ends before the answer. Once accepted, the connection carries DATAGRAM frames both ways, each
 * named by its source and destination qpn; a datagram is written out whole when it is posted (the
 * sender completes UD_SEND at once) and lands in the destination EP's next receive, or is lost
 * ({@link EmuUdEp#receiveDatagram}). The connection is no RC transport: no acknowledgements, no
 * keepalives; it ends when either IA closes. Everything runs under the IA's domain lock.
 *
 * <p>Behaviours: EXT_08, EXT_10, EXT_11.
 */
final class TcpDatagrams implements EmuAh.Path, EmuUdEp.Exchange {
    private static final Logger LOG = LoggerFactory.getLogger(TcpDatagrams.class);
    private static final int BUFFER = 4 * (Frame.HEADER_SIZE + Frame.MAX_DATAGRAM);

    private enum State { CONNECTING, REQUESTED, OFFERED, OPEN, CLOSED }

    private final TcpFabric fabric;
    /** The fabric's UD exchange connections, this one among them while it is open. */
    private final Set<TcpDatagrams> all;
    private final EmuIa ia;
    private final SocketChannel channel;
    private final SelectionKey key;
    /** The address of the peer IA (its listener). */
    private final SocketAddress peer;
    private State state;
    /** The local datagram EP of the exchange (the active one; the passive one once it accepted). */
    private EmuUdEp local;
    private int peerQpn;
    /** The handle of the EP at the other end ({@code peerQpn}), made once. */
    private EmuAh peerHandle;
    // active side
    private long connQual;
    private byte[] requestData;
    private final ByteBuffer in = ByteBuffer.allocate(BUFFER);
    private ByteBuffer out = ByteBuffer.allocate(BUFFER);
    private boolean closeWhenSent;

    /**
     * The UD exchanges of one tcp IA, each on a connection of its own: where the fabric starts one
     * ({@link TcpFabric#exchangeDatagrams}), hands over a connection whose connect request asks for
     * one, and closes them all when the IA closes (fabric lock held). Behaviours: EXT_08, EXT_10.
     */
    static final class Exchanges {
        private final TcpFabric fabric;
        private final Set<TcpDatagrams> all = new java.util.LinkedHashSet<>();

        Exchanges(TcpFabric fabric) {
            this.fabric = fabric;
        }

        /** The active side of {@code ep}'s exchange with {@code remote} on {@code qual}, its sockets on {@code selector}. */
        void connect(Selector selector, EmuUdEp ep, SocketAddress remote, long qual, byte[] privateData) {
            TcpDatagrams.connect(fabric, selector, all, ep, remote, qual, privateData);
        }

        /** The connect request on {@code c} asks for a UD exchange: the socket leaves the RC handshake. */
        void requested(TcpConnection c, InetSocketAddress from, int activeQpn, long qual, byte[] privateData) {
            fabric.removed(c);
            c.phase(TcpConnection.Phase.CLOSED);
            offered(fabric, all, c.channel(), c.key(), from, activeQpn, qual, privateData);
        }

        /** Closes every exchange's connection (the IA closes). */
        void closeAll() {
            new java.util.ArrayList<>(all).forEach(TcpDatagrams::close);
        }
    }

    private TcpDatagrams(TcpFabric fabric, Set<TcpDatagrams> all, SocketChannel channel, SelectionKey key,
                         SocketAddress peer, State state) {
        this.fabric = fabric;
        this.all = all;
        this.ia = fabric.ia();
        this.channel = channel;
        this.key = key;
        this.peer = peer;
        this.state = state;
        key.attach(this);
        all.add(this);
    }

    /**
     * The active side: a TCP connect to {@code remote} for {@code ep}'s exchange on {@code qual}; one
     * that fails at once is IB_UD_CONNECTION_ERROR after the caller returns.
     */
    private static void connect(TcpFabric fabric, Selector selector, Set<TcpDatagrams> all, EmuUdEp ep,
                        SocketAddress remote, long qual, byte[] privateData) {
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open();
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            boolean done = ch.connect(remote);
            SelectionKey k = ch.register(selector, done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT);
            TcpDatagrams d = new TcpDatagrams(fabric, all, ch, k, remote, State.CONNECTING);
            d.local = ep;
            d.connQual = qual;
            d.requestData = privateData;
            if (done) {
                d.request();
            }
            selector.wakeup();
        } catch (IOException e) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // the connect failed already
                }
            }
            LOG.debug("IA {}: UD exchange with {} failed at once: {}", fabric.ia().name(), remote, e.toString());
            fabric.ia().later(() -> ep.exchangeFailed(false, null));
        }
    }

    /**
     * The passive side: the connection {@code key} whose CONNECT_REQ asked for a UD exchange with the
     * active EP {@code activeQpn} of the IA listening at {@code from}; offered to the PSP on {@code qual}.
     */
    private static void offered(TcpFabric fabric, Set<TcpDatagrams> all, SocketChannel ch, SelectionKey key,
                        InetSocketAddress from, int activeQpn, long qual, byte[] privateData) {
        TcpDatagrams d = new TcpDatagrams(fabric, all, ch, key, from, State.OFFERED);
        d.peerQpn = activeQpn;
        key.interestOps(SelectionKey.OP_READ);
        if (!d.ia.deliverUdRequest(qual, d, privateData)) {
            d.answer(FrameType.CONNECT_REJECT, Frame.Reject.NON_PEER.code(), 0,
                    ("nothing listens for UD exchanges on connection qualifier " + qual).getBytes(
                            java.nio.charset.StandardCharsets.UTF_8));
            d.closeWhenSent = true;
            d.flush();
        }
    }

    // ------------------------------------------------------------------ the exchange

    private void request() {
        state = State.REQUESTED;
        int listenPort = fabric.address().getPort();
        byte[] payload = new byte[2 + requestData.length];
        payload[0] = (byte) (listenPort >>> 8);
        payload[1] = (byte) listenPort;
        System.arraycopy(requestData, 0, payload, 2, requestData.length);
        ensure(Frame.HEADER_SIZE + payload.length);
        Frame.encode(out, FrameType.CONNECT_REQ.code(), Frame.FLAG_UD, Frame.VERSION, payload.length, 0, connQual,
                local.qpn() & 0xffff_ffffL, Frame.MAGIC);
        out.put(payload);
        flush();
    }

    @Override
    public EmuAh handle() {
        if (peerHandle == null || peerHandle.qpn() != peerQpn) {
            peerHandle = EmuAh.remote(peer, peerQpn, this);
        }
        return peerHandle;
    }

    @Override
    public boolean gone() {
        return state != State.OFFERED;
    }

    @Override
    public void accepted(EmuUdEp passive, byte[] privateData) {
        local = passive;
        state = State.OPEN;
        answer(FrameType.CONNECT_ACCEPT, 0, passive.qpn() & 0xffff_ffffL, privateData);
        flush();
    }

    @Override
    public void rejected(byte[] privateData) {
        answer(FrameType.CONNECT_REJECT, Frame.Reject.PEER.code(), 0, privateData);
        closeWhenSent = true;
        flush();
    }

    private void answer(FrameType type, int status, long a, byte[] payload) {
        ensure(Frame.HEADER_SIZE + payload.length);
        Frame.encode(out, type.code(), 0, status, payload.length, 0, a, 0, 0);
        out.put(payload);
    }

    /** The active side's exchange ended without an address handle (domain lock held). */
    private void failed(boolean rejected, byte[] privateData) {
        if (state == State.CONNECTING || state == State.REQUESTED) {
            state = State.CLOSED;
            local.exchangeFailed(rejected, privateData);
        }
        close();
    }

    // ------------------------------------------------------------------ datagrams

    /** Behaviours: EXT_08, EXT_11. */
    @Override
    public void send(int sourceQpn, int destinationQpn, List<LmrTriplet> iov, long length) {
        if (state != State.OPEN) {
            return;
        }
        ensure(Frame.HEADER_SIZE + (int) length);
        Frame.encode(out, FrameType.DATAGRAM.code(), 0, 0, length, 0, sourceQpn & 0xffff_ffffL,
                destinationQpn & 0xffff_ffffL, 0);
        Segments.copy(iov, MemorySegment.ofBuffer(out), 0, length, true); // the segment starts at the position
        out.position(out.position() + (int) length);
        flush();
    }

    private void datagram(Frame h, ByteBuffer payload) {
        EmuUdEp ep = local;
        if (state == State.OPEN && ep != null && ep.qpn() == h.destinationQpn()) {
            EmuAh from = h.sourceQpn() == peerQpn ? handle() : EmuAh.remote(peer, h.sourceQpn(), this);
            ep.receiveDatagram(MemorySegment.ofBuffer(payload), from);
        }
    }

    // ------------------------------------------------------------------ I/O (domain lock held)

    /** A ready key of the fabric's selector. */
    void handle(SelectionKey k) {
        if (!k.isValid()) {
            return;
        }
        if (k.isConnectable()) {
            try {
                if (!channel.finishConnect()) {
                    return;
                }
            } catch (IOException e) {
                LOG.debug("IA {}: UD exchange with {} failed: {}", ia.name(), peer, e.toString());
                failed(false, null);
                return;
            }
            k.interestOps(SelectionKey.OP_READ);
            request();
            return;
        }
        if (k.isWritable()) {
            flush();
        }
        if (k.isValid() && k.isReadable()) {
            read();
        }
    }

    private void read() {
        int n;
        try {
            n = channel.read(in);
        } catch (IOException e) {
            n = -1;
        }
        if (n < 0) {
            failed(false, null);
            return;
        }
        in.flip();
        try {
            while (state != State.CLOSED && in.remaining() >= Frame.HEADER_SIZE) {
                int start = in.position();
                Frame h = Frame.decode(in);
                if (in.remaining() < h.length()) {
                    in.position(start);
                    break;
                }
                ByteBuffer payload = in.slice(in.position(), (int) h.length());
                in.position(in.position() + (int) h.length());
                frame(h, payload);
            }
        } catch (Frame.ProtocolException e) {
            LOG.warn("IA {}: UD exchange with {} dropped: {}", ia.name(), peer, e.getMessage());
            failed(false, null);
            return;
        }
        in.compact();
    }

    private void frame(Frame h, ByteBuffer payload) throws Frame.ProtocolException {
        switch (h.type()) {
            case DATAGRAM -> datagram(h, payload);
            case CONNECT_ACCEPT -> {
                if (state != State.REQUESTED) {
                    throw new Frame.ProtocolException("CONNECT_ACCEPT outside a UD exchange request");
                }
                state = State.OPEN;
                peerQpn = (int) h.passivePortQual();
                local.exchangeAccepted(handle(), bytes(payload));
            }
            case CONNECT_REJECT -> {
                if (state != State.REQUESTED) {
                    throw new Frame.ProtocolException("CONNECT_REJECT outside a UD exchange request");
                }
                failed(h.reject() == Frame.Reject.PEER, bytes(payload));
            }
            case KEEPALIVE -> {
            }
            default -> throw new Frame.ProtocolException(h.type() + " on a UD exchange's connection");
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    private void ensure(int room) {
        if (out.remaining() < room) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(out.capacity() * 2, out.position() + room));
            out.flip();
            bigger.put(out);
            out = bigger;
        }
    }

    /** Writes what is queued; the selector looks for writability while some remains. */
    private void flush() {
        if (state == State.CLOSED || !key.isValid()) {
            return;
        }
        out.flip();
        try {
            channel.write(out);
        } catch (IOException e) {
            out.clear();
            failed(false, null);
            return;
        }
        boolean pending = out.hasRemaining();
        out.compact();
        if (!pending && closeWhenSent) {
            close();
            return;
        }
        int ops = SelectionKey.OP_READ | (pending ? SelectionKey.OP_WRITE : 0);
        if (key.interestOps() != ops) {
            key.interestOps(ops);
            fabric.wakeup();
        }
    }

    /** Closes the socket; datagrams sent on this connection afterwards are lost. */
    void close() {
        if (state != State.CLOSED || channel.isOpen()) {
            state = State.CLOSED;
            key.cancel();
            try {
                channel.close();
            } catch (IOException e) {
                LOG.debug("IA {}: closing a UD exchange's connection: {}", ia.name(), e.toString());
            }
            all.remove(this);
        }
    }
}
