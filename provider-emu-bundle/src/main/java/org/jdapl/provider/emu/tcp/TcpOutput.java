package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

import org.jdapl.dat.LmrTriplet;


/**
 * The output side of a tcp connection (PROTOCOL.md, "Frames"): frames queued in order, encoded into a
 * direct output buffer, payloads up to {@link #COPY_LIMIT} copied into it so that many frames leave in
 * one write, larger ones written from registered memory in one gathering write with their header.
 * The parts of the connection take a frame ({@link #frame}), fill it with the factory of its type and
 * queue it ({@link #enqueue}); frames that have been encoded go back to a pool, so that steady traffic
 * allocates none. {@link #flush} writes and tells the connection's {@link Socket} how it went. Runs
 * under the IA's domain lock, on whichever thread has frames to send.
 */
final class TcpOutput {
    /** Payloads up to this size are copied into the output buffer; larger ones are written from memory. */
    private static final int COPY_LIMIT = 8 << 10;
    private static final int LARGE_BUFFER = 64 << 10;
    /** Frames queued beyond which the engine transmits no more and the peer's input is not read. */
    private static final int MAX_QUEUED_FRAMES = 1 << 14;

    /** What the output needs of the socket's owner: whether it may write, and what came of a write. */
    interface Socket {
        /** Whether frames may be written now (the TCP connect is done and the socket not closed). */
        boolean canWrite();

        /** A write took everything ({@code all}) or left output waiting for the socket. */
        void written(boolean all, boolean waitChanged);

        /** A write failed: the connection ends. */
        void writeFailed(Exception e);
    }

    private final Socket socket;
    private final SocketChannel channel;
    /** The IA's coarse clock (the time of its last select), for keepalives. */
    private final LongSupplier clock;
    private final ArrayDeque<Frame> queue = new ArrayDeque<>();
    /** Frames encoded and free for the next {@link #frame}. */
    private final ArrayDeque<Frame> pool = new ArrayDeque<>();
    private int readResponses;
    private ByteBuffer stage;
    private MemorySegment stageSeg;
    private ByteBuffer[] big;
    private boolean growOutput;
    private long lastWrite = System.nanoTime();
    /** Whether output waits for the socket to take more (the selector watches for writability). */
    private boolean waitsForSocket;

    TcpOutput(Socket socket, SocketChannel channel, LongSupplier clock, int size) {
        this.socket = socket;
        this.channel = channel;
        this.clock = clock;
        this.stage = ByteBuffer.allocateDirect(size);
        this.stageSeg = MemorySegment.ofBuffer(stage);
    }

    /** A frame to fill with the factory of its type and {@link #enqueue}. */
    Frame frame() {
        Frame f = pool.pollFirst();
        return f == null ? new Frame() : f;
    }

    /** RDMA_READ_RESP frames queued and not yet encoded. */
    int readResponsesQueued() {
        return readResponses;
    }

    /** The connection is established: switch to the large buffer once it is empty. */
    void grow() {
        growOutput = true;
    }

    boolean waitsForSocket() {
        return waitsForSocket;
    }

    /** Records whether output waits for the socket; true if that changed (the selector interest must follow). */
    private boolean waitForSocket(boolean wait) {
        if (wait == waitsForSocket) {
            return false;
        }
        waitsForSocket = wait;
        return true;
    }

    /** Writes as much queued output as the socket takes now, and tells the socket's owner (domain lock held). */
    void flush() {
        if (!socket.canWrite()) {
            return;
        }
        boolean done;
        try {
            done = writeOut();
        } catch (IOException | RuntimeException e) {
            socket.writeFailed(e);
            return;
        }
        socket.written(done, waitForSocket(!done));
    }

    int queued() {
        return queue.size();
    }

    /** Whether the queue may take more frames of the engine (and the peer's input may be read). */
    boolean hasRoom() {
        return queue.size() < MAX_QUEUED_FRAMES;
    }

    long lastWrite() {
        return lastWrite;
    }

    /** An abort leaves only the answers (ACK, NAK, keepalive) queued before it. */
    void dropAllButAnswers() {
        for (int i = queue.size(); i > 0; i--) {
            Frame f = queue.pollFirst();
            if (f.type().isAnswer()) {
                queue.addLast(f);
            } else {
                recycle(f);
            }
        }
        readResponses = 0;
    }

    void clear() {
        queue.clear();
        pool.clear();
        readResponses = 0;
        big = null;
    }

    private void recycle(Frame f) {
        f.clearPayload();
        pool.addLast(f);
    }

    /**
     * Queues a frame filled for output. When nothing is queued before it and the socket takes output, a
     * frame whose payload is copied anyway goes straight into the output buffer (the order on the wire
     * is the same, and it is written by the flush that follows, as a queued frame would be).
     */
    void enqueue(Frame f) {
        long length = f.length();
        if (queue.isEmpty() && big == null && !waitsForSocket && socket.canWrite()
                && f.type() != FrameType.RDMA_READ_RESP) {
            growStage();
            if (length <= COPY_LIMIT && Frame.HEADER_SIZE + length <= stage.capacity() / 2
                    && stage.remaining() >= Frame.HEADER_SIZE + length) {
                f.encode(stage);
                if (length > 0) {
                    copyPayload(f.payload(), stage.position());
                    stage.position(stage.position() + (int) length);
                }
                recycle(f);
                return;
            }
        }
        if (f.type() == FrameType.RDMA_READ_RESP) {
            readResponses++;
        }
        queue.addLast(f);
    }

    /** Switches to the large output buffer once the connection is established and the buffer is empty. */
    private void growStage() {
        if (growOutput && big == null && stage.position() == 0) {
            growOutput = false;
            stage = ByteBuffer.allocateDirect(LARGE_BUFFER);
            stageSeg = MemorySegment.ofBuffer(stage);
        }
    }

    /**
     * Writes queued frames as far as the socket takes them: small payloads through the output buffer,
     * large ones gathered from memory.
     *
     * @return true if everything is written
     */
    boolean writeOut() throws IOException {
        while (true) {
            growStage();
            while (big == null && !queue.isEmpty()) {
                Frame o = queue.peekFirst();
                boolean small = o.length() <= COPY_LIMIT && Frame.HEADER_SIZE + o.length() <= stage.capacity() / 2;
                int need = Frame.HEADER_SIZE + (small ? (int) o.length() : 0);
                if (stage.remaining() < need) {
                    break;
                }
                queue.pollFirst();
                o.encode(stage);
                if (o.type() == FrameType.RDMA_READ_RESP) {
                    readResponses--;
                }
                if (o.length() > 0) {
                    if (small) {
                        copyPayload(o.payload(), stage.position());
                        stage.position(stage.position() + (int) o.length());
                    } else {
                        big = payloadBuffers(o);
                    }
                }
                recycle(o);
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
            lastWrite = clock.getAsLong();
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
            case List<?> list -> {
                List<LmrTriplet> iov = (List<LmrTriplet>) list;
                long pos = at;
                for (int i = 0; i < iov.size(); i++) {
                    LmrTriplet t = iov.get(i);
                    MemorySegment.copy(t.lmr().segment(), t.offset(), stageSeg, pos, t.length());
                    pos += t.length();
                }
            }
            default -> throw new IllegalStateException("payload " + payload);
        }
    }

    @SuppressWarnings("unchecked")
    private static ByteBuffer[] payloadBuffers(Frame o) {
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
}
