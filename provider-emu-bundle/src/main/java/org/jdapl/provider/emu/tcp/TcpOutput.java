package org.jdapl.provider.emu.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.jdapl.dat.LmrTriplet;


/**
 * The output side of a tcp connection (PROTOCOL.md, "Frames"): frames queued in order, encoded into a
 * direct output buffer, payloads up to {@link #COPY_LIMIT} copied into it so that many frames leave in
 * one write, larger ones written from registered memory in one gathering write with their header.
 * Runs under the IA's domain lock, on whichever thread has frames to send.
 */
final class TcpOutput {
    /** Payloads up to this size are copied into the output buffer; larger ones are written from memory. */
    private static final int COPY_LIMIT = 8 << 10;
    private static final int LARGE_BUFFER = 64 << 10;

    /** A frame waiting to be encoded into the output buffer. */
    private record Out(int type, int flags, int status, long seq, long a, long b, long c, long length,
                       Object payload) {
    }

    private final TcpConnection connection;
    private final SocketChannel channel;
    private final ArrayDeque<Out> queue = new ArrayDeque<>();
    private ByteBuffer stage;
    private MemorySegment stageSeg;
    private ByteBuffer[] big;
    private boolean growOutput;
    private long lastWrite = System.nanoTime();
    /** Whether output waits for the socket to take more (the selector watches for writability). */
    private boolean waitsForSocket;

    TcpOutput(TcpConnection connection, SocketChannel channel, int size) {
        this.connection = connection;
        this.channel = channel;
        this.stage = ByteBuffer.allocateDirect(size);
        this.stageSeg = MemorySegment.ofBuffer(stage);
    }

    /** The connection is established: switch to the large buffer once it is empty. */
    void grow() {
        growOutput = true;
    }

    boolean waitsForSocket() {
        return waitsForSocket;
    }

    /** Records whether output waits for the socket; true if that changed (the selector interest must follow). */
    boolean waitForSocket(boolean wait) {
        if (wait == waitsForSocket) {
            return false;
        }
        waitsForSocket = wait;
        return true;
    }

    int queued() {
        return queue.size();
    }

    long lastWrite() {
        return lastWrite;
    }

    /** An abort leaves only the answers (ACK, NAK, keepalive) queued before it. */
    void dropAllButAnswers() {
        queue.removeIf(o -> o.type() != Frame.ACK && o.type() != Frame.NAK && o.type() != Frame.KEEPALIVE);
    }

    void clear() {
        queue.clear();
        big = null;
    }

    /**
     * Queues a frame for output. When nothing is queued before it and the socket takes output, a frame
     * whose payload is copied anyway goes straight into the output buffer (the order on the wire is the
     * same, and it is written by the flush that follows, as a queued frame would be).
     */
    void enqueue(int type, int flags, int status, long seq, long a, long b, long c, long length,
                 Object payload) {
        if (queue.isEmpty() && big == null && connection.writable()
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
                Out o = queue.peekFirst();
                boolean small = o.length() <= COPY_LIMIT && Frame.HEADER_SIZE + o.length() <= stage.capacity() / 2;
                int need = Frame.HEADER_SIZE + (small ? (int) o.length() : 0);
                if (stage.remaining() < need) {
                    break;
                }
                queue.pollFirst();
                Frame.encode(stage, o.type(), o.flags(), o.status(), o.length(), o.seq(), o.a(), o.b(), o.c());
                if (o.type() == Frame.RDMA_READ_RESP) {
                    connection.readResponseWritten();
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
            lastWrite = connection.fabric().clock();
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
}
