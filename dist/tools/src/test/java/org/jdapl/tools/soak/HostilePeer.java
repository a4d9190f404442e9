package org.jdapl.tools.soak;

import static org.jdapl.tools.soak.WireFrames.frame;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A stateful hostile peer of the emulated provider's tcp fabric: each session connects, completes the
 * handshake as the protocol says (connect request, delivered, accept with the victim's RMR context,
 * address and length, ready-to-use), then sends traffic that is well framed but wrong in one way the
 * session's scenario picks: forged, stale and neighbouring RMR contexts, offsets and lengths at and
 * across the region's edges and at integer limits, sequence numbers out of window, replays, frames
 * split at a byte boundary, answers to nothing, or a peer that stops reading.
 */
final class HostilePeer {
    /** What a session does after the handshake. */
    enum Scenario {
        FORGED_CONTEXT, STALE_CONTEXT, NEIGHBOUR_CONTEXT, EDGE_WRITE, EDGE_READ, SEQUENCE_OUT_OF_WINDOW, REPLAY,
        SPLIT_FRAMES, STOP_READING, UNSOLICITED_ANSWERS, UNDEFINED_FLAGS, ABORT_TEXT
    }

    private static final long[] LIMITS = {0, 1, -1, Integer.MAX_VALUE, 0x80000000L, 0xFFFFFFFFL, 0x100000000L,
        Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - 1};

    private final InetSocketAddress victim;
    private final long qual;
    private final AtomicInteger staleContext = new AtomicInteger();
    /** Sessions per scenario. */
    final AtomicLongArray sessions = new AtomicLongArray(Scenario.values().length);
    /** Sessions whose handshake the victim completed. */
    final AtomicLongArray accepted = new AtomicLongArray(1);

    HostilePeer(InetSocketAddress victim, long qual) {
        this.victim = victim;
        this.qual = qual;
    }

    /** Runs session {@code n}: its scenario and every choice in it follow from {@code n}. */
    void session(long n) throws IOException {
        Random random = new Random(n * 0x9E3779B97F4A7C15L);
        Scenario scenario = Scenario.values()[(int) (n % Scenario.values().length)];
        sessions.incrementAndGet(scenario.ordinal());
        try (Socket s = new Socket()) {
            s.connect(victim, 5_000);
            s.setSoTimeout(5_000);
            s.setTcpNoDelay(true);
            OutputStream out = s.getOutputStream();
            DataInputStream in = WireFrames.input(s.getInputStream());
            byte[] request = WireFrames.connectRequest(qual, 0x80000000L + n, 1);
            if (scenario == Scenario.SPLIT_FRAMES) {
                split(out, request, (int) (n / Scenario.values().length % (request.length - 1)) + 1);
            } else {
                out.write(request);
            }
            byte[] pd = new byte[Responder.PRIVATE_DATA];
            WireFrames.Header h;
            do {
                h = WireFrames.read(in, pd);
            } while (h.type() == WireFrames.CONNECT_DELIVERED || h.type() == WireFrames.KEEPALIVE);
            if (h.type() != WireFrames.CONNECT_ACCEPT) {
                throw new IOException("the victim answered the handshake with frame type " + h.type());
            }
            accepted.incrementAndGet(0);
            ByteBuffer b = ByteBuffer.wrap(pd);
            int ctx = b.getInt();
            long addr = b.getLong();
            long len = b.getLong();
            out.write(frame(WireFrames.CONNECT_RTU, 0, 0, 0, 0, 0, null));
            int previous = staleContext.getAndSet(ctx);
            attack(scenario, random, out, in, s, ctx, previous, addr, len, n);
            if (random.nextInt(4) == 0) {
                s.setSoLinger(true, 0); // end with a reset
            }
        }
    }

    private void attack(Scenario scenario, Random random, OutputStream out, DataInputStream in, Socket s, int ctx,
                        int stale, long addr, long len, long n) throws IOException {
        byte[] data = new byte[1 + random.nextInt(64)];
        random.nextBytes(data);
        long inside = addr + random.nextLong(Math.max(1, len - data.length));
        switch (scenario) {
            case FORGED_CONTEXT -> {
                int forged = random.nextInt();
                out.write(frame(WireFrames.RDMA_WRITE, 0, 1, (forged == ctx ? ctx + 1 : forged) & 0xffffffffL, inside,
                        0, data));
            }
            case STALE_CONTEXT -> out.write(frame(WireFrames.RDMA_WRITE, 0, 1, (stale == ctx ? ctx ^ 1 : stale)
                    & 0xffffffffL, inside, 0, data));
            case NEIGHBOUR_CONTEXT -> {
                int delta = random.nextBoolean() ? 1 + random.nextInt(3) : -1 - random.nextInt(3);
                long wide = random.nextInt(4) == 0 ? (1L << 32) : 0; // a context with high bits set
                out.write(frame(WireFrames.RDMA_WRITE, 0, 1, ((ctx + delta) & 0xffffffffL) | wide, inside, 0, data));
            }
            case EDGE_WRITE -> {
                long[] at = {addr - 1, addr - data.length + 1, addr + len - data.length + 1, addr + len, addr + len - 1,
                    LIMITS[random.nextInt(LIMITS.length)], addr + LIMITS[random.nextInt(LIMITS.length)],
                    -data.length, Long.MAX_VALUE - data.length + 2};
                out.write(frame(WireFrames.RDMA_WRITE, 0, 1, ctx & 0xffffffffL, at[random.nextInt(at.length)], 0, data));
            }
            case EDGE_READ -> {
                long length = random.nextBoolean() ? len + 1 - random.nextInt(2) * len
                        : LIMITS[random.nextInt(LIMITS.length)];
                long[] at = {addr - 1, addr, addr + len, addr + len - 1, LIMITS[random.nextInt(LIMITS.length)],
                    Long.MAX_VALUE - length + 1};
                out.write(frame(WireFrames.RDMA_READ_REQ, 0, 1, ctx & 0xffffffffL, at[random.nextInt(at.length)],
                        length, null));
            }
            case SEQUENCE_OUT_OF_WINDOW -> {
                long[] seqs = {0, 2, 3, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32, 65537};
                out.write(frame(WireFrames.RDMA_WRITE, 0, seqs[random.nextInt(seqs.length)], ctx & 0xffffffffL,
                        inside, 0, data));
            }
            case REPLAY -> {
                byte[] write = frame(WireFrames.RDMA_WRITE, 0, 1, ctx & 0xffffffffL, inside, 0, data);
                out.write(write);
                out.write(write);
            }
            case SPLIT_FRAMES -> {
                byte[] write = frame(WireFrames.RDMA_WRITE, 0, 1, ctx & 0xffffffffL, inside, 0, data);
                split(out, write, (int) (n / Scenario.values().length % (write.length - 1)) + 1);
                byte[] send = frame(WireFrames.SEND, 0, 2, 0, 0, 0, data);
                split(out, send, 1 + random.nextInt(send.length - 1));
                expectAnswers(in, 2);
            }
            case STOP_READING -> {
                // Reads of the whole region, up to the limit of reads in flight, and never a byte read back.
                s.setSendBufferSize(4096);
                for (int i = 1; i <= 64; i++) {
                    out.write(frame(WireFrames.RDMA_READ_REQ, 0, i, ctx & 0xffffffffL, addr, len, null));
                }
                sleep(20 + random.nextInt(50));
            }
            case UNSOLICITED_ANSWERS -> {
                int[] types = {WireFrames.ACK, WireFrames.NAK, WireFrames.RDMA_READ_RESP, WireFrames.RECV_POSTED,
                    WireFrames.CONNECT_ACCEPT, WireFrames.CONNECT_REQ, WireFrames.CONNECT_RTU};
                int type = types[random.nextInt(types.length)];
                int status = type == WireFrames.NAK ? 1 + random.nextInt(3) : 0;
                out.write(frame(type, status, random.nextInt(3), 0, 0, 0,
                        type == WireFrames.RDMA_READ_RESP ? data : null));
            }
            case UNDEFINED_FLAGS -> out.write(frame(WireFrames.SEND, 1 << random.nextInt(8), random.nextInt(4),
                    data.length, 1, random.nextLong(), random.nextLong(), random.nextLong(), data));
            case ABORT_TEXT -> {
                byte[] text = new byte[random.nextBoolean() ? 256 : 257];
                random.nextBytes(text);
                out.write(frame(WireFrames.RDMA_WRITE, 0, 1, ctx & 0xffffffffL, inside, 0, data));
                out.write(frame(WireFrames.ABORT, random.nextInt(3), 0, 0, 0, 0, text));
            }
        }
        out.flush();
        if (scenario != Scenario.STOP_READING && scenario != Scenario.SPLIT_FRAMES) {
            s.setSoTimeout(200);
            drain(in);
        }
    }

    /** Writes {@code frame} in two pieces cut at {@code at}, with a pause between them. */
    private static void split(OutputStream out, byte[] frame, int at) throws IOException {
        out.write(frame, 0, at);
        out.flush();
        sleep(1);
        out.write(frame, at, frame.length - at);
        out.flush();
    }

    /** Reads answers until {@code n} ACKs came (the victim executed the split frames). */
    private static void expectAnswers(DataInputStream in, int n) throws IOException {
        int acks = 0;
        while (acks < n) {
            WireFrames.Header h = WireFrames.read(in, null);
            if (h.type() == WireFrames.ACK) {
                acks++;
            } else if (h.type() != WireFrames.KEEPALIVE && h.type() != WireFrames.RECV_POSTED) {
                throw new IOException("a split frame was answered with frame type " + h.type());
            }
        }
    }

    /** Reads what the victim says until it closes or is quiet for a moment. */
    private static void drain(DataInputStream in) throws IOException {
        try {
            while (true) {
                WireFrames.read(in, null);
            }
        } catch (SocketTimeoutException | java.io.EOFException | java.net.SocketException e) {
            // closed, reset or quiet
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
