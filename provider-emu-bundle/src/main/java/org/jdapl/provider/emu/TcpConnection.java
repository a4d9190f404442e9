package org.jdapl.provider.emu;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection of the emulated provider's {@code tcp} fabric: the connection handshake of one
 * EP connection, then its data frames (PROTOCOL.md). Everything runs under the fabric lock of the
 * IA; socket I/O is non-blocking, reads happen on the IA's I/O thread, writes on whichever thread
 * has frames to send (the I/O thread finishes what the socket did not take at once).
 *
 * <p>Requests of the local EP are transmitted in order and complete in order when the peer's ACK,
 * NAK or read response arrives; nothing is transmitted after a SEND until it is answered, so a SEND
 * refused for want of a receive (RNR NAK) can be sent again without reordering. Incoming data is
 * written into registered memory only after the rmr_context, protection zone, privilege and bounds
 * checks, and straight from the socket into that memory for large payloads. Every frame is checked
 * by {@link Frame#decode} before any field is used; a frame that breaks the protocol drops the
 * connection with a logged reason (the EP, if any, reports BROKEN).
 */
final class TcpConnection extends Link {
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
    /** Payloads up to this size are copied into the output buffer; larger ones are written from memory. */
    private static final int COPY_LIMIT = 8 << 10;
    /** Payload still to come from which reads go straight into the destination memory. */
    private static final int DIRECT_LIMIT = 16 << 10;
    private static final int SMALL_BUFFER = 2 << 10;
    private static final int LARGE_BUFFER = 64 << 10;
    private static final int MAX_READS_IN_FLIGHT = EmuLimits.MAX_RDMA_READ_PER_EP;
    private static final int MAX_QUEUED_FRAMES = 1 << 14;
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final int READ_ROUNDS = 16;

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

    /** A frame waiting to be encoded into the output buffer. */
    private record Out(int type, int flags, int status, long seq, long a, long b, long c, long length,
                       Object payload) {
    }

    private final TcpFabric fabric;
    private final EmuIa ia;
    private final SocketChannel channel;
    private SelectionKey key;
    private Phase phase;
    private final int commonPort;
    // active side
    private final ConnectAttempt attempt;
    private final long connQual;
    private final boolean common;
    private final byte[] requestData;
    private final long portQual;
    // passive side
    private boolean requestDead;
    private String remoteLabel = "?";
    // established
    private EmuEp ep;
    private boolean open;
    // output
    private final ArrayDeque<Out> queue = new ArrayDeque<>();
    private ByteBuffer stage;
    private MemorySegment stageSeg;
    private ByteBuffer[] big;
    private boolean growOutput;
    private boolean writeInterest;
    private long lastWrite;
    // input
    private ByteBuffer in;
    private MemorySegment inSeg;
    private boolean growInput;
    private Frame.Header current;
    /** The header of the frame being received ({@link #current} while it is). */
    private final Frame.Header decoded = new Frame.Header();
    private long payloadLeft;
    private final List<MemorySegment> dest = new ArrayList<>(EmuLimits.MAX_IOV);
    private int destIndex;
    private long destOffset;
    private byte[] control;
    private int controlFill;
    private long lastRead;
    private int directWant;
    /** The last frame's payload was large enough to be read straight into memory. */
    private boolean expectLarge;
    private long closeDeadline;
    // requests of the local EP
    private long nextSeq = 1;
    private int sent;
    private boolean sendOutstanding;
    private int readsInFlight;
    // requests of the peer
    private long expectedSeq = 1;
    private boolean rnrNaked;
    private int readResponsesQueued;
    private WorkRequest.Recv inbound;
    private DtoOperation inboundOp;
    private int inboundInvalidated;
    private final long created = System.nanoTime();

    /** An active connection for {@code attempt}. */
    TcpConnection(TcpFabric fabric, SocketChannel channel, java.net.SocketAddress remote, ConnectAttempt attempt,
                  long connQual, boolean common, byte[] requestData, long portQual) {
        this.fabric = fabric;
        this.ia = fabric.ia();
        this.channel = channel;
        this.attempt = attempt;
        this.connQual = connQual;
        this.common = common;
        this.requestData = requestData;
        this.portQual = portQual;
        this.commonPort = 0;
        this.ep = attempt.ep;
        this.phase = Phase.CONNECTING;
        this.remoteLabel = String.valueOf(remote);
        buffers(SMALL_BUFFER);
    }

    /** A passive connection accepted on the IA's listener ({@code commonPort} 0) or a CSP's. */
    TcpConnection(TcpFabric fabric, SocketChannel channel, int commonPort) {
        this.fabric = fabric;
        this.ia = fabric.ia();
        this.channel = channel;
        this.attempt = null;
        this.connQual = 0;
        this.common = false;
        this.requestData = null;
        this.portQual = 0;
        this.commonPort = commonPort;
        this.phase = Phase.LISTENING;
        buffers(SMALL_BUFFER);
        try {
            remoteLabel = String.valueOf(channel.getRemoteAddress());
        } catch (IOException e) {
            remoteLabel = "an unknown peer";
        }
    }

    private void buffers(int size) {
        stage = ByteBuffer.allocateDirect(size);
        stageSeg = MemorySegment.ofBuffer(stage);
        in = ByteBuffer.allocateDirect(size);
        inSeg = MemorySegment.ofBuffer(in);
        lastRead = System.nanoTime();
        lastWrite = lastRead;
    }

    void register(SelectionKey k) {
        key = k;
    }

    Phase phase() {
        return phase;
    }

    boolean identified() {
        return phase != Phase.LISTENING;
    }

    // ------------------------------------------------------------------ Link

    @Override
    boolean isOpen() {
        return open;
    }

    /** The local EP is DISCONNECTED: no byte moves any more; the transport closes once its output is sent. */
    @Override
    void close() {
        open = false;
        completeInbound();
        beginClose();
    }

    @Override
    void abort(EmuEp from, boolean broken) {
        if (phase == Phase.OPEN) {
            queue.removeIf(o -> o.type() != Frame.ACK && o.type() != Frame.NAK && o.type() != Frame.KEEPALIVE);
            enqueue(Frame.ABORT, 0, broken ? Frame.ABORT_BROKEN : Frame.ABORT_DISCONNECT, 0, 0, 0, 0, null);
            flush();
        }
    }

    @Override
    void notifyDisconnect(EmuEp from) {
        if (phase == Phase.OPEN) {
            enqueue(Frame.DISCONNECT, 0, 0, 0, 0, 0, 0, null);
            flush();
        }
    }

    @Override
    void receivePosted(EmuEp from) {
        if (rnrNaked && phase == Phase.OPEN && open) {
            rnrNaked = false;
            enqueue(Frame.RECV_POSTED, 0, 0, 0, 0, 0, 0, null);
            flush();
        }
    }

    // ------------------------------------------------------------------ establishment

    /** The TCP connect completed (or failed) on the I/O thread. */
    void onConnectable() {
        try {
            if (!channel.finishConnect()) {
                return;
            }
        } catch (IOException e) {
            LOG.debug("IA {}: connect failed: {}", ia.name(), e.toString());
            failEstablishment(EventNumber.CONNECTION_UNREACHABLE, "connect failed: " + e);
            return;
        }
        connected();
    }

    /** The TCP connection is up: send the connect request. */
    void connected() {
        if (phase != Phase.CONNECTING) {
            return;
        }
        phase = Phase.REQUESTED;
        lastRead = System.nanoTime();
        int listenPort = fabric.address().getPort();
        byte[] payload = new byte[2 + requestData.length];
        payload[0] = (byte) (listenPort >>> 8);
        payload[1] = (byte) listenPort;
        System.arraycopy(requestData, 0, payload, 2, requestData.length);
        enqueue(Frame.CONNECT_REQ, common ? Frame.FLAG_COMMON : 0, Frame.VERSION, 0, connQual, portQual, Frame.MAGIC,
                payload);
        updateInterest();
        flush();
    }

    /**
     * {@code dat_cr_accept} of the request on this connection by {@code passive}.
     *
     * @return false if the active side is gone (the EP reports ACCEPT_COMPLETION_ERROR)
     */
    boolean accept(EmuEp passive, byte[] privateData) {
        if (phase != Phase.OFFERED || requestDead) {
            return false;
        }
        ep = passive;
        phase = Phase.ACCEPTED;
        enqueue(Frame.CONNECT_ACCEPT, 0, 0, 0, passive.query().localPortQual(), 0, 0, privateData);
        flush();
        return phase == Phase.ACCEPTED;
    }

    /** {@code dat_cr_reject} (PEER) or a refusal by the provider (NON_PEER, payload a reason). */
    void reject(int status, byte[] payload) {
        if (phase == Phase.OFFERED || phase == Phase.LISTENING) {
            byte[] data = payload.length > EmuLimits.MAX_PRIVATE_DATA
                    ? java.util.Arrays.copyOf(payload, EmuLimits.MAX_PRIVATE_DATA) : payload;
            enqueue(Frame.CONNECT_REJECT, 0, status, 0, 0, 0, 0, data);
            flush();
        }
        beginClose();
    }

    /** The EP no longer wants this connection while it is being established (timed out, disconnected, freed). */
    void abandon() {
        ep = null;
        switch (phase) {
            case CONNECTING -> shutdown();
            case REQUESTED, ACCEPTED -> {
                enqueue(Frame.ABORT, 0, Frame.ABORT_DISCONNECT, 0, 0, 0, 0, null);
                flush();
                beginClose();
            }
            default -> beginClose();
        }
    }

    private void failEstablishment(EventNumber outcome, String reason) {
        ConnectAttempt a = attempt;
        shutdown();
        if (a != null && a.isLive()) {
            a.ep.failAttempt(a, outcome);
        }
    }

    // ------------------------------------------------------------------ sending requests

    /** Transmits the EP's untransmitted requests in order as far as they may go (fabric lock held). */
    @Override
    void pump(EmuEp from) {
        if (phase != Phase.OPEN || !open || ep != from) {
            return;
        }
        completeLeadingBinds();
        if (!ia.held()) {
            transmit();
        }
        if (from.requests().isEmpty()) {
            from.tryFinishGraceful();
        }
    }

    private void transmit() {
        ArrayDeque<WorkRequest> requests = ep.requests();
        Iterator<WorkRequest> it = requests.iterator();
        for (int i = 0; i < sent && it.hasNext(); i++) {
            it.next();
        }
        boolean queued = false;
        while (it.hasNext() && !sendOutstanding && queue.size() < MAX_QUEUED_FRAMES) {
            WorkRequest wr = it.next();
            switch (wr) {
                case WorkRequest.Bind bind -> sent++;
                case WorkRequest.Send send -> {
                    if (send.rnrDeadline != 0 && !send.rnrRetry) {
                        return;
                    }
                    if (!Segments.usable(send.iov)) {
                        failWhenHead(wr);
                        return;
                    }
                    send.rnrRetry = false;
                    if (send.rnrDeadline == 0) {
                        send.seq = nextSeq++;
                    }
                    int flags = (send.invalidate ? Frame.FLAG_INVALIDATE : 0)
                            | (send.has(CompletionFlag.SOLICITED_WAIT) ? Frame.FLAG_SOLICITED : 0);
                    enqueue(Frame.SEND, flags, 0, send.seq, send.rmrContext & 0xffff_ffffL, 0, 0, send.length,
                            send.iov);
                    sent++;
                    sendOutstanding = true;
                    queued = true;
                }
                case WorkRequest.Rdma rdma -> {
                    if (rdma.read) {
                        if (readsInFlight >= MAX_READS_IN_FLIGHT
                                || (rdma.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0)) {
                            flushIf(queued);
                            return;
                        }
                        if (rdma.iov != null && !Segments.usable(rdma.iov)) {
                            failWhenHead(wr);
                            return;
                        }
                        rdma.seq = nextSeq++;
                        enqueue(Frame.RDMA_READ_REQ, 0, 0, rdma.seq, rdma.remote.rmrContext() & 0xffff_ffffL,
                                rdma.remote.targetAddress(), rdma.length, null);
                        readsInFlight++;
                    } else {
                        if (rdma.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0) {
                            flushIf(queued);
                            return;
                        }
                        if (!Segments.usable(rdma.iov)) {
                            failWhenHead(wr);
                            return;
                        }
                        rdma.seq = nextSeq++;
                        enqueue(Frame.RDMA_WRITE, 0, 0, rdma.seq, rdma.remote.rmrContext() & 0xffff_ffffL,
                                rdma.remote.targetAddress(), 0, rdma.length, rdma.iov);
                    }
                    sent++;
                    queued = true;
                }
                case WorkRequest.Recv recv -> throw new IllegalStateException("a receive in the request queue");
            }
        }
        flushIf(queued);
    }

    private void flushIf(boolean queued) {
        if (queued) {
            flush();
        }
    }

    /** A request whose local memory is gone fails LOCAL_PROTECTION once everything before it completed. */
    private void failWhenHead(WorkRequest wr) {
        if (sent == 0 && ep.requests().peekFirst() == wr) {
            ep.fail(wr, DtoStatus.LOCAL_PROTECTION);
        }
    }

    private void completeLeadingBinds() {
        ArrayDeque<WorkRequest> requests = ep.requests();
        while (true) {
            WorkRequest head = requests.peekFirst();
            if (!(head instanceof WorkRequest.Bind bind)) {
                return;
            }
            requests.pollFirst();
            if (sent > 0) {
                sent--;
            }
            ep.completeRequest(bind, DtoStatus.SUCCESS, 0);
        }
    }

    // ------------------------------------------------------------------ output

    private void enqueue(int type, int flags, int status, long seq, long a, long b, long c, byte[] payload) {
        enqueue(type, flags, status, seq, a, b, c, payload == null ? 0 : payload.length, payload);
    }

    /**
     * Queues a frame for output. When nothing is queued before it and the socket takes output, a frame
     * whose payload is copied anyway goes straight into the output buffer (the order on the wire is the
     * same, and it is written by the flush that follows, as a queued frame would be).
     */
    private void enqueue(int type, int flags, int status, long seq, long a, long b, long c, long length,
                         Object payload) {
        if (queue.isEmpty() && big == null && !writeInterest && phase != Phase.CLOSED
                && type != Frame.RDMA_READ_RESP) {
            growStage();
            if (length <= COPY_LIMIT && Frame.HEADER_SIZE + length <= stage.capacity() / 2
                    && stage.remaining() >= Frame.HEADER_SIZE + length) {
                Frame.encode(stage, type, flags, status, length, seq, a, b, c);
                if (length > 0) {
                    copyPayload(payload, stage.position());
                    stage.position(stage.position() + (int) length);
                }
                return;
            }
        }
        queue.addLast(new Out(type, flags, status, seq, a, b, c, length, payload));
    }

    /** Switches to the large output buffer once the connection is established and the buffer is empty. */
    private void growStage() {
        if (growOutput && big == null && stage.position() == 0) {
            growOutput = false;
            stage = ByteBuffer.allocateDirect(LARGE_BUFFER);
            stageSeg = MemorySegment.ofBuffer(stage);
        }
    }

    /** Writes as much queued output as the socket takes now (fabric lock held). */
    void flush() {
        if (phase == Phase.CLOSED || phase == Phase.CONNECTING) {
            return;
        }
        try {
            boolean done = writeOut();
            if (done) {
                fabric.answered(this);
                if (phase == Phase.CLOSING && !channel.socket().isOutputShutdown()) {
                    channel.shutdownOutput();
                }
            }
            setWriteInterest(!done);
        } catch (IOException | RuntimeException e) {
            fail("write failed: " + e, false);
        }
    }

    private boolean writeOut() throws IOException {
        while (true) {
            growStage();
            while (big == null && !queue.isEmpty()) {
                Out o = queue.peekFirst();
                boolean small = o.length() <= COPY_LIMIT && Frame.HEADER_SIZE + o.length() <= stage.capacity() / 2;
                int need = Frame.HEADER_SIZE + (small ? (int) o.length() : 0);
                if (stage.remaining() < need) {
                    break;
                }
                queue.pollFirst();
                Frame.encode(stage, o.type(), o.flags(), o.status(), o.length(), o.seq(), o.a(), o.b(), o.c());
                if (o.type() == Frame.RDMA_READ_RESP) {
                    readResponsesQueued--;
                }
                if (o.length() > 0) {
                    if (small) {
                        copyPayload(o.payload(), stage.position());
                        stage.position(stage.position() + (int) o.length());
                    } else {
                        big = payloadBuffers(o);
                    }
                }
            }
            if (stage.position() == 0 && big == null) {
                return true;
            }
            stage.flip();
            if (big == null) {
                channel.write(stage);
            } else {
                ByteBuffer[] gather = new ByteBuffer[big.length + 1];
                gather[0] = stage;
                System.arraycopy(big, 0, gather, 1, big.length);
                channel.write(gather);
            }
            lastWrite = fabric.clock();
            if (stage.hasRemaining()) {
                stage.compact();
                return false;
            }
            stage.clear();
            if (big != null) {
                for (ByteBuffer b : big) {
                    if (b.hasRemaining()) {
                        return false;
                    }
                }
                big = null;
            }
        }
    }

    @SuppressWarnings("unchecked")
    private void copyPayload(Object payload, int at) {
        switch (payload) {
            case byte[] bytes -> MemorySegment.copy(bytes, 0, stageSeg, ValueLayout.JAVA_BYTE, at, bytes.length);
            case MemorySegment seg -> MemorySegment.copy(seg, 0, stageSeg, at, seg.byteSize());
            case List<?> iov -> {
                long pos = at;
                for (LmrTriplet t : (List<LmrTriplet>) iov) {
                    MemorySegment.copy(t.lmr().segment(), t.offset(), stageSeg, pos, t.length());
                    pos += t.length();
                }
            }
            default -> throw new IllegalStateException("payload " + payload);
        }
    }

    @SuppressWarnings("unchecked")
    private static ByteBuffer[] payloadBuffers(Out o) {
        List<ByteBuffer> out = new ArrayList<>();
        switch (o.payload()) {
            case MemorySegment seg -> chunks(seg, out);
            case List<?> iov -> {
                for (LmrTriplet t : (List<LmrTriplet>) iov) {
                    chunks(t.lmr().segment().asSlice(t.offset(), t.length()), out);
                }
            }
            default -> throw new IllegalStateException("payload " + o.payload());
        }
        return out.toArray(ByteBuffer[]::new);
    }

    private static void chunks(MemorySegment seg, List<ByteBuffer> out) {
        long size = seg.byteSize();
        for (long off = 0; off < size; off += 1 << 30) {
            out.add(seg.asSlice(off, Math.min(1 << 30, size - off)).asByteBuffer());
        }
    }

    private void setWriteInterest(boolean want) {
        if (want != writeInterest) {
            writeInterest = want;
            updateInterest();
            if (want) {
                fabric.wakeup();
            }
        }
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
            boolean read = !(phase == Phase.OPEN && ia.held()) && queue.size() < MAX_QUEUED_FRAMES;
            ops = (read ? SelectionKey.OP_READ : 0) | (writeInterest ? SelectionKey.OP_WRITE : 0);
        }
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    // ------------------------------------------------------------------ input

    /** The socket has bytes (I/O thread, fabric lock held). */
    void onReadable() {
        try {
            for (int round = 0; round < READ_ROUNDS && phase != Phase.CLOSED; round++) {
                if (phase == Phase.CLOSING) {
                    in.clear();
                    int n = channel.read(in);
                    in.clear();
                    if (n < 0) {
                        shutdown();
                    }
                    if (n <= 0) {
                        return;
                    }
                    continue;
                }
                if (phase == Phase.OPEN && ia.held()) {
                    return;
                }
                int n;
                boolean drained;
                if (current != null && payloadLeft >= DIRECT_LIMIT && in.position() == 0 && destIndex < dest.size()) {
                    n = readDirect();
                    drained = n < directWant;
                } else {
                    // After a large payload the next frame is likely large too: read its header alone, so
                    // that its payload goes straight from the socket into memory rather than through here.
                    boolean headerOnly = expectLarge && current == null && in.position() < Frame.HEADER_SIZE;
                    int limit = in.limit();
                    if (headerOnly) {
                        in.limit(Frame.HEADER_SIZE);
                    }
                    int room = in.remaining();
                    try {
                        n = channel.read(in);
                    } finally {
                        in.limit(limit);
                    }
                    drained = n < room;
                    if (n > 0) {
                        lastRead = fabric.clock();
                        in.flip();
                        parse();
                        if (phase == Phase.CLOSED) {
                            return;
                        }
                        in.compact();
                        if (growInput) {
                            growInput = false;
                            ByteBuffer bigger = ByteBuffer.allocateDirect(LARGE_BUFFER);
                            in.flip();
                            bigger.put(in);
                            in = bigger;
                            // The whole buffer: ofBuffer starts at the position, here after the bytes kept.
                            inSeg = MemorySegment.ofBuffer(in.duplicate().clear());
                        }
                    }
                }
                if (n < 0) {
                    if (phase == Phase.LISTENING) {
                        shutdown();
                    } else {
                        fail("the peer closed the connection", false);
                    }
                    return;
                }
                if (n == 0 || drained) {
                    return;
                }
            }
        } catch (IOException e) {
            fail("read failed: " + e, false);
        } catch (Frame.ProtocolException e) {
            fail("protocol violation: " + e.getMessage(), true);
        } catch (RuntimeException e) {
            LOG.error("IA {}: error on the connection with {}", ia.name(), remoteLabel, e);
            fail("internal error: " + e, true);
        }
    }

    /** Reads payload from the socket straight into the destination memory. */
    private int readDirect() throws IOException, Frame.ProtocolException {
        MemorySegment d = dest.get(destIndex);
        long n = Math.min(payloadLeft, Math.min(d.byteSize() - destOffset, 1 << 30));
        directWant = (int) n;
        ByteBuffer bb = d.asSlice(destOffset, n).asByteBuffer();
        int got = channel.read(bb);
        if (got > 0) {
            lastRead = fabric.clock();
            advanceDest(got);
            payloadLeft -= got;
            if (payloadLeft == 0) {
                frameEnd();
            }
        }
        return got;
    }

    private void advanceDest(long n) {
        destOffset += n;
        while (destIndex < dest.size() && destOffset == dest.get(destIndex).byteSize()) {
            destIndex++;
            destOffset = 0;
        }
    }

    private void parse() throws Frame.ProtocolException {
        while (phase != Phase.CLOSING && phase != Phase.CLOSED) {
            if (current == null) {
                if (in.remaining() < Frame.HEADER_SIZE) {
                    return;
                }
                current = Frame.decode(in, decoded);
                payloadLeft = current.length();
                expectLarge = payloadLeft >= DIRECT_LIMIT;
                dest.clear();
                destIndex = 0;
                destOffset = 0;
                control = null;
                header(current);
                if (payloadLeft == 0 && current != null) {
                    frameEnd();
                }
                continue;
            }
            int n = (int) Math.min(in.remaining(), payloadLeft);
            if (n == 0) {
                return;
            }
            deliver(in.position(), n);
            in.position(in.position() + n);
            payloadLeft -= n;
            if (payloadLeft == 0) {
                frameEnd();
            }
        }
    }

    /** Puts {@code n} payload bytes of the input buffer at {@code at} where the current frame sends them. */
    private void deliver(int at, int n) {
        if (control != null) {
            MemorySegment.copy(inSeg, ValueLayout.JAVA_BYTE, at, control, controlFill, n);
            controlFill += n;
            return;
        }
        long done = 0;
        while (done < n && destIndex < dest.size()) {
            MemorySegment d = dest.get(destIndex);
            long k = Math.min(n - done, d.byteSize() - destOffset);
            MemorySegment.copy(inSeg, at + done, d, destOffset, k);
            done += k;
            advanceDest(k);
        }
    }

    private void expectControl() {
        control = new byte[(int) current.length()];
        controlFill = 0;
    }

    private void violation(String reason) throws Frame.ProtocolException {
        throw new Frame.ProtocolException(reason);
    }

    /** A checked header arrived; decides where its payload goes. */
    private void header(Frame.Header h) throws Frame.ProtocolException {
        int type = h.type();
        if (type == Frame.KEEPALIVE) {
            return;
        }
        switch (phase) {
            case LISTENING -> {
                if (type != Frame.CONNECT_REQ) {
                    violation(Frame.name(type) + " before a connect request");
                }
                if (h.c() != Frame.MAGIC) {
                    violation("a connect request without the protocol's magic");
                }
                expectControl();
            }
            case REQUESTED -> {
                switch (type) {
                    case Frame.CONNECT_DELIVERED -> {
                        if (attempt.isLive()) {
                            attempt.delivered = true;
                        }
                    }
                    case Frame.CONNECT_ACCEPT, Frame.CONNECT_REJECT -> expectControl();
                    case Frame.ABORT -> expectControl();
                    default -> violation(Frame.name(type) + " while a connect request is unanswered");
                }
            }
            case OFFERED -> {
                if (type != Frame.ABORT) {
                    violation(Frame.name(type) + " while the connect request waits for the consumer");
                }
                expectControl();
            }
            case ACCEPTED -> {
                if (type == Frame.ABORT) {
                    expectControl();
                } else if (type != Frame.CONNECT_RTU) {
                    violation(Frame.name(type) + " while the accept waits for the RTU");
                }
            }
            case OPEN -> openHeader(h);
            default -> {
            }
        }
    }

    private void openHeader(Frame.Header h) throws Frame.ProtocolException {
        switch (h.type()) {
            case Frame.SEND -> {
                checkSeq(h);
                WorkRequest.Recv recv = ep.nextReceive();
                if (recv == null) {
                    rnrNaked = true;
                    enqueue(Frame.NAK, 0, Frame.NAK_RNR, h.seq(), 0, 0, 0, null);
                    return;
                }
                ep.takeReceive();
                expectedSeq++;
                DtoOperation op = DtoOperation.RECEIVE;
                if (!Segments.usable(recv.iov)) {
                    responderError(recv, DtoStatus.LOCAL_PROTECTION, op, h.seq(), Frame.NAK_REMOTE_RESPONDER);
                    return;
                }
                if (h.length() > recv.capacity) {
                    responderError(recv, DtoStatus.LOCAL_LENGTH, op, h.seq(), Frame.NAK_REMOTE_RESPONDER);
                    return;
                }
                int invalidated = 0;
                if ((h.flags() & Frame.FLAG_INVALIDATE) != 0) {
                    op = DtoOperation.RECEIVE_WITH_INVALIDATE;
                    if ((h.a() >>> 32) != 0 || !ia.invalidateRmr((int) h.a(), ep)) {
                        responderError(recv, DtoStatus.REMOTE_ACCESS, op, h.seq(), Frame.NAK_REMOTE_ACCESS);
                        return;
                    }
                    invalidated = (int) h.a();
                }
                inbound = recv;
                inboundOp = op;
                inboundInvalidated = invalidated;
                for (LmrTriplet t : recv.iov) {
                    dest.add(t.lmr().segment().asSlice(t.offset(), t.length()));
                }
            }
            case Frame.RDMA_WRITE -> {
                checkSeq(h);
                expectedSeq++;
                MemorySegment target = (h.a() >>> 32) != 0 ? null
                        : ia.resolveContext((int) h.a(), ep, h.b(), h.length(), MemPriv.REMOTE_WRITE);
                if (target == null) {
                    remoteAccessViolation(h, "RDMA Write");
                    return;
                }
                dest.add(target);
            }
            case Frame.RDMA_READ_REQ -> {
                checkSeq(h);
                expectedSeq++;
                if (readResponsesQueued >= MAX_READS_IN_FLIGHT) {
                    violation("more than " + MAX_READS_IN_FLIGHT + " RDMA Reads in flight");
                }
                MemorySegment source = (h.a() >>> 32) != 0 ? null
                        : ia.resolveContext((int) h.a(), ep, h.b(), h.c(), MemPriv.REMOTE_READ);
                if (source == null) {
                    remoteAccessViolation(h, "RDMA Read");
                    return;
                }
                readResponsesQueued++;
                enqueue(Frame.RDMA_READ_RESP, 0, 0, h.seq(), 0, 0, 0, h.c(), source);
            }
            case Frame.RDMA_READ_RESP -> {
                WorkRequest head = inFlightHead(h);
                if (!(head instanceof WorkRequest.Rdma rdma) || !rdma.read) {
                    violation("a read response for request " + h.seq() + ", which is no RDMA Read");
                    return;
                }
                if (h.length() != rdma.length) {
                    violation("a read response of " + h.length() + " bytes for a read of " + rdma.length);
                }
                if (rdma.iov != null) {
                    if (Segments.usable(rdma.iov)) {
                        dest.addAll(Segments.slices(rdma.iov));
                    }
                } else {
                    MemorySegment sink = ia.resolveContext(rdma.localTarget.rmrContext(), ep,
                            rdma.localTarget.targetAddress(), rdma.length, MemPriv.REMOTE_WRITE);
                    if (sink != null) {
                        dest.add(sink);
                    }
                }
            }
            case Frame.ACK -> {
                WorkRequest head = inFlightHead(h);
                if (head instanceof WorkRequest.Rdma rdma && rdma.read) {
                    violation("an ACK for RDMA Read " + h.seq());
                }
                requestDone(head, DtoStatus.SUCCESS);
            }
            case Frame.NAK -> nak(h);
            case Frame.RECV_POSTED -> {
                if (ep.requests().peekFirst() instanceof WorkRequest.Send send && sent == 0 && send.rnrDeadline != 0) {
                    send.rnrRetry = true;
                    ep.pumpRequests();
                }
            }
            case Frame.DISCONNECT -> ep.peerDisconnectNotification();
            case Frame.ABORT -> expectControl();
            default -> violation(Frame.name(h.type()) + " on an established connection");
        }
    }

    private void checkSeq(Frame.Header h) throws Frame.ProtocolException {
        if (h.seq() != expectedSeq) {
            violation(Frame.name(h.type()) + " with sequence number " + h.seq() + ", expected " + expectedSeq);
        }
    }

    /** The head of the EP's transmitted requests, which the answer {@code h} must name. */
    private WorkRequest inFlightHead(Frame.Header h) throws Frame.ProtocolException {
        WorkRequest head = ep.requests().peekFirst();
        if (sent == 0 || head == null || head instanceof WorkRequest.Bind || head.seq != h.seq()) {
            violation(Frame.name(h.type()) + " for request " + h.seq() + ", which is not the oldest in flight");
        }
        return head;
    }

    private void requestDone(WorkRequest head, DtoStatus status) {
        long length = switch (head) {
            case WorkRequest.Send s -> s.length;
            case WorkRequest.Rdma r -> r.length;
            default -> 0;
        };
        ep.requests().pollFirst();
        sent--;
        if (head instanceof WorkRequest.Send) {
            sendOutstanding = false;
        }
        if (head instanceof WorkRequest.Rdma r && r.read) {
            readsInFlight--;
        }
        ep.completeRequest(head, status, status == DtoStatus.SUCCESS ? length : 0);
        ep.pumpRequests();
    }

    private void nak(Frame.Header h) throws Frame.ProtocolException {
        WorkRequest head = inFlightHead(h);
        if (h.status() == Frame.NAK_RNR) {
            if (!(head instanceof WorkRequest.Send send)) {
                violation("an RNR NAK for request " + h.seq() + ", which is no send");
                return;
            }
            long now = System.nanoTime();
            if (send.rnrDeadline == 0) {
                send.rnrDeadline = now + TimeUnit.MILLISECONDS.toNanos(EmuLimits.RNR_RETRY_MILLIS);
            } else if (now - send.rnrDeadline >= 0) {
                sent--;
                sendOutstanding = false;
                ep.fail(send, DtoStatus.RECEIVER_NOT_READY);
                return;
            }
            sent--;
            sendOutstanding = false;
            send.rnrRetry = false;
            if (!send.rnrTimerArmed) {
                send.rnrTimerArmed = true;
                EmuEp owner = ep;
                ia.schedule(send.rnrDeadline - now, () -> {
                    send.rnrRetry = true;
                    if (!owner.isFreed()) {
                        owner.pumpRequests();
                    }
                });
            }
            return;
        }
        DtoStatus status = h.status() == Frame.NAK_REMOTE_ACCESS ? DtoStatus.REMOTE_ACCESS : DtoStatus.REMOTE_RESPONDER;
        sent--;
        sendOutstanding = false;
        if (head instanceof WorkRequest.Rdma r && r.read) {
            readsInFlight--;
        }
        ep.fail(head, status);
    }

    /** A receive could not take the message: it completes with an error, the sender is NAKed, the link breaks. */
    private void responderError(WorkRequest.Recv recv, DtoStatus status, DtoOperation op, long seq, int nak) {
        ep.completeRecv(recv, status, 0, op, 0);
        enqueue(Frame.NAK, 0, nak, seq, 0, 0, 0, null);
        current = null;
        ep.breakLink();
    }

    private void remoteAccessViolation(Frame.Header h, String what) {
        LOG.warn("IA {}: {} from {} refused (rmr_context 0x{}, address 0x{}, {} bytes): the connection breaks",
                ia.name(), what, remoteLabel, Long.toHexString(h.a()), Long.toHexString(h.b()),
                h.type() == Frame.RDMA_READ_REQ ? h.c() : h.length());
        enqueue(Frame.NAK, 0, Frame.NAK_REMOTE_ACCESS, h.seq(), 0, 0, 0, null);
        current = null;
        ep.breakLink();
    }

    /** The current frame's payload is complete. */
    private void frameEnd() throws Frame.ProtocolException {
        Frame.Header h = current;
        current = null;
        if (phase == Phase.CLOSING || phase == Phase.CLOSED) {
            return;
        }
        switch (h.type()) {
            case Frame.CONNECT_REQ -> connectRequest(h);
            case Frame.CONNECT_ACCEPT -> {
                ConnectAttempt a = attempt;
                EmuEp owner = ep;
                if (owner != null && owner.tcpEstablished(a, this, control)) {
                    phase = Phase.OPEN;
                    open = true;
                    growInput = true;
                    growOutput = true;
                    enqueue(Frame.CONNECT_RTU, 0, 0, 0, 0, 0, 0, null);
                    flush();
                } else {
                    abandon();
                }
            }
            case Frame.CONNECT_REJECT -> {
                ConnectAttempt a = attempt;
                byte[] data = control;
                shutdown();
                if (a.isLive()) {
                    if (h.status() == Frame.REJECT_PEER) {
                        a.ep.rejectedBy(a, data);
                    } else {
                        LOG.info("IA {}: connect to {} refused by the peer: {}", ia.name(), remoteLabel,
                                new String(data, StandardCharsets.UTF_8));
                        a.ep.failAttempt(a, EventNumber.CONNECTION_NON_PEER_REJECTED);
                    }
                }
            }
            case Frame.CONNECT_RTU -> {
                phase = Phase.OPEN;
                open = true;
                growInput = true;
                growOutput = true;
                ep.tcpPassiveEstablished(this);
            }
            case Frame.ABORT -> peerAbort(h);
            case Frame.SEND -> {
                WorkRequest.Recv recv = inbound;
                if (recv != null) {
                    inbound = null;
                    enqueue(Frame.ACK, 0, 0, h.seq(), 0, 0, 0, null);
                    ep.completeRecv(recv, DtoStatus.SUCCESS, h.length(), inboundOp, inboundInvalidated);
                }
                fabric.flushLater(this);
            }
            case Frame.RDMA_WRITE -> {
                enqueue(Frame.ACK, 0, 0, h.seq(), 0, 0, 0, null);
                fabric.flushLater(this);
            }
            case Frame.RDMA_READ_REQ -> fabric.flushLater(this);
            case Frame.RDMA_READ_RESP -> {
                WorkRequest head = ep.requests().peekFirst();
                if (dest.isEmpty() && h.length() > 0) {
                    sent--;
                    readsInFlight--;
                    ep.fail(head, DtoStatus.LOCAL_PROTECTION);
                } else {
                    requestDone(head, DtoStatus.SUCCESS);
                }
            }
            default -> {
            }
        }
    }

    private void connectRequest(Frame.Header h) {
        byte[] payload = control;
        int listenPort = ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
        byte[] privateData = java.util.Arrays.copyOfRange(payload, 2, payload.length);
        if (h.status() != Frame.VERSION) {
            String reason = "protocol version " + h.status() + " is not spoken here (version " + Frame.VERSION + ")";
            LOG.warn("IA {}: connect request from {} refused: {}", ia.name(), remoteLabel, reason);
            reject(Frame.REJECT_NON_PEER, reason.getBytes(StandardCharsets.UTF_8));
            return;
        }
        boolean commonRequest = (h.flags() & Frame.FLAG_COMMON) != 0;
        if (commonRequest != (commonPort != 0) || (commonRequest && h.a() != commonPort)) {
            reject(Frame.REJECT_NON_PEER, "no common service point on this port".getBytes(StandardCharsets.UTF_8));
            return;
        }
        InetSocketAddress from;
        try {
            from = new InetSocketAddress(((InetSocketAddress) channel.getRemoteAddress()).getAddress(), listenPort);
        } catch (IOException e) {
            fail("the peer's address is unknown: " + e, false);
            return;
        }
        phase = Phase.OFFERED;
        if (!ia.deliverRequest(null, this, h.a(), commonRequest, privateData, from, h.b())) {
            phase = Phase.LISTENING;
            reject(Frame.REJECT_NON_PEER, ("nothing listens on connection qualifier " + h.a()
                    + " or its backlog is full").getBytes(StandardCharsets.UTF_8));
            return;
        }
        if (phase == Phase.OFFERED) {
            enqueue(Frame.CONNECT_DELIVERED, 0, 0, 0, 0, 0, 0, null);
            flush();
        }
    }

    private void peerAbort(Frame.Header h) {
        String reason = control == null || control.length == 0 ? "" : new String(control, StandardCharsets.UTF_8);
        LOG.debug("IA {}: {} from {} {}", ia.name(), h.status() == Frame.ABORT_BROKEN ? "broken" : "abort",
                remoteLabel, reason);
        switch (phase) {
            case REQUESTED -> failEstablishment(EventNumber.CONNECTION_NON_PEER_REJECTED, "the peer aborted");
            case OFFERED -> {
                requestDead = true;
                beginClose();
            }
            case ACCEPTED -> {
                EmuEp owner = ep;
                beginClose();
                if (owner != null) {
                    owner.transportFailed(this);
                }
            }
            case OPEN -> {
                EmuEp owner = ep;
                open = false;
                completeInbound();
                beginClose();
                owner.remoteAbort(h.status() == Frame.ABORT_BROKEN);
            }
            default -> {
            }
        }
    }

    // ------------------------------------------------------------------ ending

    /** Completes a receive that was filling when the connection ended (FLUSHED, before any later receive). */
    private void completeInbound() {
        WorkRequest.Recv r = inbound;
        if (r != null) {
            inbound = null;
            ep.completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
        }
    }

    /** Starts an orderly end: output already queued is sent, then input is discarded until EOF or the linger. */
    private void beginClose() {
        if (phase == Phase.CLOSING || phase == Phase.CLOSED) {
            return;
        }
        if (phase == Phase.CONNECTING) {
            shutdown();
            return;
        }
        phase = Phase.CLOSING;
        open = false;
        current = null;
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
            case CONNECTING, REQUESTED -> {
                ConnectAttempt a = attempt;
                if (a != null && a.isLive()) {
                    a.ep.failAttempt(a, was == Phase.CONNECTING ? EventNumber.CONNECTION_UNREACHABLE
                            : EventNumber.CONNECTION_NON_PEER_REJECTED);
                }
            }
            case OFFERED -> requestDead = true;
            case ACCEPTED, OPEN -> {
                if (owner != null) {
                    owner.transportFailed(this);
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
        queue.clear();
        big = null;
        if (key != null) {
            key.cancel();
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
                if (!(phase == Phase.OPEN && ia.held()) && now - lastRead > TcpFabric.IDLE_TIMEOUT_NANOS) {
                    fail("the peer was silent for " + TimeUnit.NANOSECONDS.toMillis(now - lastRead) + " ms", false);
                    return;
                }
                if (now - lastWrite > TcpFabric.KEEPALIVE_NANOS && queue.isEmpty()) {
                    enqueue(Frame.KEEPALIVE, 0, 0, 0, 0, 0, 0, null);
                    flush();
                }
            }
        }
    }

    /** Breaks the transport abruptly (a reset), as a cut cable or a dead peer process does (test hook). */
    void reset() {
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
