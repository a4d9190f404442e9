package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.EmuLimits;
import org.jdapl.provider.emu.RcRules;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The input side of a tcp connection (PROTOCOL.md, "Frames"): reads into a direct input buffer,
 * decodes and checks each header ({@link Frame#decode}), hands it to the connection's
 * {@link Handler} of the moment (the handshake, then the engine), which decides where its payload
 * goes, and delivers the payload there: into the checked registered memory (straight from
 * the socket for payloads of {@link #DIRECT_LIMIT} or more), or into a control buffer for the
 * handshake. Runs under the IA's domain lock, on the I/O thread or a polling consumer's.
 */
final class TcpInput implements RcRules.Placement {
    /** Takes the frames of a connection: its handshake until it is open, then its engine. */
    interface Handler {
        /** A checked header arrived: decides where its payload goes (or breaks the protocol). */
        void header(Frame h) throws Frame.ProtocolException;

        /** The payload of {@code h} is complete (its control data in {@code control}, if any). */
        void frameEnd(Frame h, byte[] control) throws Frame.ProtocolException;
    }

    private static final Logger LOG = LoggerFactory.getLogger(TcpInput.class);
    /** Payload still to come from which reads go straight into the destination memory. */
    private static final int DIRECT_LIMIT = 16 << 10;
    private static final int LARGE_BUFFER = 64 << 10;
    private static final int READ_ROUNDS = 16;
    /**
     * How long a consumer's thread keeps reading a large payload that stopped coming before it goes
     * back to the selector (the peer writes it in one go; its segments arrive microseconds apart).
     */
    private static final long STALL_NANOS = 30_000;

    /** The connection whose socket this reads: its phase, and its end when the socket fails or the peer breaks the protocol. */
    private final TcpConnection c;
    private final TcpFabric fabric;
    private final EmuIa ia;
    private final SocketChannel channel;
    private ByteBuffer in;
    private MemorySegment inSeg;
    private boolean growInput;
    private Frame current;
    /** The header of the frame being received ({@link #current} while it is). */
    private final Frame decoded = new Frame();
    /** Where frames go. */
    private Handler handler;
    private long payloadLeft;
    /**
     * Where the current frame's payload goes, in order: {@code destCount} parts, each
     * {@code destLen[i]} bytes of {@code destSeg[i]} from {@code destOff[i]} (no slice is made per frame).
     */
    private MemorySegment[] destSeg = new MemorySegment[EmuLimits.MAX_IOV];
    private long[] destOff = new long[EmuLimits.MAX_IOV];
    private long[] destLen = new long[EmuLimits.MAX_IOV];
    private int destCount;
    private int destIndex;
    private long destOffset;
    private byte[] control;
    private int controlFill;
    private long lastRead = System.nanoTime();
    private int directWant;
    /** The last frame with a payload had one large enough to be read straight into memory. */
    private boolean expectLarge;
    /** When the payload being read last made progress (a consumer's thread reading a large frame). */
    private long progressAt;

    TcpInput(TcpConnection c, TcpFabric fabric, SocketChannel channel, int size) {
        this.c = c;
        this.fabric = fabric;
        this.ia = fabric.ia();
        this.channel = channel;
        this.in = ByteBuffer.allocateDirect(size);
        this.inSeg = MemorySegment.ofBuffer(in);
    }

    /** Frames go to {@code h} from now on (the handshake of a new connection). */
    void handTo(Handler h) {
        handler = h;
    }

    /** The connection is established: its frames go to {@code engine}, through the large buffer after the next read. */
    void open(Handler engine) {
        handler = engine;
        growInput = true;
    }

    /** When the peer was last heard from. */
    long lastRead() {
        return lastRead;
    }

    /** Starts the silence clock now (the connect request is sent). */
    void touch() {
        lastRead = System.nanoTime();
    }

    /** Whether the last frame with a payload had a large one: the next is likely large too. */
    boolean expectsLarge() {
        return expectLarge;
    }

    /** The current frame's payload goes on into {@code length} bytes of {@code segment} from {@code offset}. */
    @Override
    public void place(MemorySegment segment, long offset, long length) {
        if (destCount == destSeg.length) {
            destSeg = Arrays.copyOf(destSeg, destCount * 2);
            destOff = Arrays.copyOf(destOff, destCount * 2);
            destLen = Arrays.copyOf(destLen, destCount * 2);
        }
        destSeg[destCount] = segment;
        destOff[destCount] = offset;
        destLen[destCount] = length;
        destCount++;
    }

    /** The current frame's payload goes on into the whole of {@code segment}. */
    void place(MemorySegment segment) {
        place(segment, 0, segment.byteSize());
    }

    /** Whether the current frame's payload goes anywhere (a place is set). */
    boolean hasDestination() {
        return destCount > 0;
    }

    /** The rest of the current frame is not delivered. */
    void dropFrame() {
        current = null;
    }

    /** The current frame's payload is complete: the connection acts on it. */
    private void frameEnd() throws Frame.ProtocolException {
        Frame h = current;
        current = null;
        if (h.type() != FrameType.KEEPALIVE && !c.ending()) {
            handler.frameEnd(h, control);
        }
    }

    /**
     * Reads what the socket has (a bounded number of rounds) and hands each checked header and each
     * completed frame to the connection (I/O thread or a polling consumer, domain lock held).
     */
    void onReadable() {
        try {
            for (int round = 0; round < READ_ROUNDS && c.phase() != TcpConnection.Phase.CLOSED; ) {
                if (c.phase() == TcpConnection.Phase.CLOSING) {
                    in.clear();
                    int n = channel.read(in);
                    in.clear();
                    if (n < 0) {
                        c.shutdown();
                    }
                    if (n <= 0) {
                        return;
                    }
                    round++;
                    continue;
                }
                if (c.phase() == TcpConnection.Phase.OPEN && ia.held()) {
                    return;
                }
                int n;
                boolean drained;
                if (current != null && payloadLeft >= DIRECT_LIMIT && in.position() == 0 && destIndex < destCount) {
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
                        if (c.phase() == TcpConnection.Phase.CLOSED) {
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
                    if (c.phase() == TcpConnection.Phase.LISTENING) {
                        c.shutdown();
                    } else {
                        c.fail("the peer closed the connection", false);
                    }
                    return;
                }
                if (n == 0 || drained) {
                    if (!restComing(n)) {
                        return;
                    }
                } else {
                    round++;
                }
            }
        } catch (IOException e) {
            c.fail("read failed: " + e, false);
        } catch (Frame.ProtocolException e) {
            c.fail("protocol violation: " + e.getMessage(), true);
        } catch (RuntimeException e) {
            LOG.error("IA {}: error on the connection with {}", ia.name(), c.remoteLabel(), e);
            c.fail("internal error: " + e, true);
        }
    }

    /**
     * Whether to read again at once after a read that drained the socket ({@code n} bytes): only in
     * a consumer's thread (a waiter or a polling dequeue, never the I/O thread), only inside a large
     * frame, and only while the payload keeps coming ({@link #STALL_NANOS}). The peer writes such a
     * frame in one go, so the rest is microseconds away: reading it as it arrives overlaps this copy
     * with the peer's write, where going back to the selector would put the thread to sleep and cost
     * a wake-up per piece.
     */
    private boolean restComing(int n) {
        if (current == null || payloadLeft == 0 || current.length() < DIRECT_LIMIT || !fabric.consumerReads()) {
            return false;
        }
        long now = System.nanoTime();
        if (n > 0) {
            progressAt = now;
        } else if (now - progressAt > STALL_NANOS) {
            return false;
        }
        Thread.onSpinWait();
        return true;
    }

    /** Reads payload from the socket straight into the destination memory. */
    private int readDirect() throws IOException, Frame.ProtocolException {
        int i = destIndex;
        long n = Math.min(payloadLeft, Math.min(destLen[i] - destOffset, 1 << 30));
        directWant = (int) n;
        ByteBuffer bb = destSeg[i].asSlice(destOff[i] + destOffset, n).asByteBuffer();
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
        while (destIndex < destCount && destOffset == destLen[destIndex]) {
            destIndex++;
            destOffset = 0;
        }
    }

    private void parse() throws Frame.ProtocolException {
        while (c.phase() != TcpConnection.Phase.CLOSING && c.phase() != TcpConnection.Phase.CLOSED) {
            if (current == null) {
                if (in.remaining() < Frame.HEADER_SIZE) {
                    return;
                }
                current = Frame.decode(in, decoded);
                payloadLeft = current.length();
                if (payloadLeft > 0) {
                    // An answer without payload (the ACK that rides before a reply) says nothing of the next.
                    expectLarge = payloadLeft >= DIRECT_LIMIT;
                    fabric.largeInput(expectLarge);
                }
                progressAt = fabric.clock();
                Arrays.fill(destSeg, 0, destCount, null);
                destCount = 0;
                destIndex = 0;
                destOffset = 0;
                control = null;
                if (current.type() != FrameType.KEEPALIVE) {
                    handler.header(current);
                }
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
        while (done < n && destIndex < destCount) {
            int i = destIndex;
            long k = Math.min(n - done, destLen[i] - destOffset);
            MemorySegment.copy(inSeg, at + done, destSeg[i], destOff[i] + destOffset, k);
            done += k;
            advanceDest(k);
        }
    }

    /** The current frame's payload is control data, collected for the connection. */
    void expectControl() {
        control = new byte[(int) current.length()];
        controlFill = 0;
    }
}
