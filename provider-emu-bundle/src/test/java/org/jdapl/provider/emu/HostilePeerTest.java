package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jdapl.provider.emu.tcp.Frame;
import org.jdapl.provider.emu.tcp.FrameType;

/**
 * A raw socket client attacks IA B of a tcp fixture while A and B stay connected: garbage, truncated
 * frames, huge lengths, forged and stale rmr_contexts, out-of-bounds offsets and frames out of order.
 * Each time the attacker's connection is dropped, no byte outside the exposed region changes, and the
 * healthy connection keeps moving data.
 */
@Timeout(120)
class HostilePeerTest {
    private static final Duration DROP = Duration.ofSeconds(6);
    private static final int GUARD = 256;
    private static final int REGION = 4096;

    private Fixture f;
    private Endpoint[] healthy;
    private MemorySegment whole;
    private LocalMemoryRegion exposed;
    private PublicServicePoint psp;

    @BeforeEach
    void open() {
        f = Fixture.tcp();
        healthy = f.connect();
        whole = f.memory(REGION + 2L * GUARD);
        whole.fill((byte) 0x3c);
        exposed = f.b.lmr(whole.asSlice(GUARD, REGION));
        psp = f.b.ia.createPspAny(f.b.evd, PspFlag.CONSUMER);
    }

    @AfterEach
    void close() {
        f.close();
    }

    private RawPeer attacker() throws IOException {
        return new RawPeer(f.b.ia.query().attributes().address());
    }

    /** The attacker connects to B's PSP and B accepts with a fresh EP: the raw connection is established. */
    private RawPeer established(Endpoint[] passive) throws IOException {
        RawPeer p = attacker();
        p.connectRequest(Frame.VERSION, psp.query().connQual(), "hello".getBytes(StandardCharsets.UTF_8));
        DatEvent e = f.b.next();
        while (!(e instanceof DatEvent.ConnectionRequest)) {
            if (e instanceof DatEvent.Connection c && c.ep() == healthy[1]) {
                throw new AssertionError("the healthy connection got " + c.number());
            }
            e = f.b.next();
        }
        DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) e;
        assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), cr.request().query().privateData());
        passive[0] = f.b.ep();
        cr.request().accept(passive[0], new byte[0]);
        assertEquals(FrameType.CONNECT_DELIVERED, p.next().type());
        assertEquals(FrameType.CONNECT_ACCEPT, p.next().type());
        p.frame(FrameType.CONNECT_RTU, 0, 0, 0, 0, 0, 0, 0, null);
        f.b.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
        return p;
    }

    private void assertHealthy() {
        for (long i = 0; i < GUARD; i++) {
            assertEquals((byte) 0x3c, whole.get(ValueLayout.JAVA_BYTE, i), "guard byte " + i);
            assertEquals((byte) 0x3c, whole.get(ValueLayout.JAVA_BYTE, GUARD + REGION + i), "guard byte " + i);
        }
        MemorySegment src = f.memory(1024);
        src.fill((byte) 0x42);
        MemorySegment dst = f.memory(1024);
        LocalMemoryRegion sl = f.a.lmr(src);
        LocalMemoryRegion dl = f.b.lmr(dst);
        healthy[1].postRecv(iov(dl, 0, 1024), 77, none());
        healthy[0].postSend(iov(sl, 0, 1024), 78, none());
        assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
        DatEvent.DtoCompletion r = nextDto(f.b);
        assertEquals(77, r.cookie());
        assertEquals(DtoStatus.SUCCESS, r.status());
        assertEquals(-1, src.mismatch(dst));
        sl.free();
        dl.free();
    }

    /** The next DTO completion of the side, past connection events of the attacker's EPs. */
    private DatEvent.DtoCompletion nextDto(Fixture.Side side) {
        while (true) {
            DatEvent e = side.next();
            if (e instanceof DatEvent.DtoCompletion d) {
                return d;
            }
            if (e instanceof DatEvent.Connection c && (c.ep() == healthy[0] || c.ep() == healthy[1])) {
                throw new AssertionError("the healthy connection got " + c.number());
            }
        }
    }

    private void brokenPassive(Endpoint ep) {
        DatEvent.Connection c = f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
        assertEquals(ep, c.ep());
    }

    @Test
    void garbageIsDropped() throws IOException {
        byte[] junk = new byte[1024];
        new Random(7).nextBytes(junk);
        try (RawPeer p = attacker()) {
            p.raw(junk);
            assertTrue(p.closedWithin(DROP));
        }
        assertHealthy();
    }

    @Test
    void truncatedFrameThenSilenceIsDropped() throws IOException {
        try (RawPeer p = attacker()) {
            p.raw(new byte[] {(byte) FrameType.CONNECT_REQ.code(), 0, 0, 1, 0, 0});
            assertTrue(p.closedWithin(DROP));
        }
        try (RawPeer p = attacker()) {
            p.raw(new byte[] {(byte) FrameType.CONNECT_REQ.code()});
            p.close();
        }
        assertHealthy();
    }

    @Test
    void hugeLengthsAreDropped() throws IOException {
        try (RawPeer p = attacker()) {
            p.frame(FrameType.CONNECT_REQ, 0, Frame.VERSION, 0xffff_ffffL, 0, 1, 0, Frame.MAGIC, null);
            assertTrue(p.closedWithin(DROP));
        }
        Endpoint[] passive = new Endpoint[1];
        try (RawPeer p = established(passive)) {
            p.frame(FrameType.SEND, 0, 0, (1L << 31) + 1, 1, 0, 0, 0, new byte[64]);
            assertTrue(p.closedWithin(DROP));
        }
        brokenPassive(passive[0]);
        try (RawPeer p = established(passive)) {
            p.frame(FrameType.RDMA_READ_REQ, 0, 0, 0, 1, exposed.rmrContext() & 0xffff_ffffL,
                    exposed.query().registeredAddress(), 1L << 40, null);
            assertTrue(p.closedWithin(DROP));
        }
        brokenPassive(passive[0]);
        assertHealthy();
    }

    @Test
    void forgedStaleAndOutOfBoundsRdmaIsRefusedAndTouchesNothing() throws IOException {
        Endpoint[] passive = new Endpoint[1];
        long base = exposed.query().registeredAddress();
        long ctx = exposed.rmrContext() & 0xffff_ffffL;
        long[][] attacks = {
            {ctx ^ 0x5a5a5a5aL, base, 64},
            {ctx, base - 16, 64},
            {ctx, base + REGION - 8, 64},
            {ctx, base + REGION + 8, 8},
            {ctx | (1L << 40), base, 8},
            {ctx, -1L, 8},
        };
        for (long[] at : attacks) {
            try (RawPeer p = established(passive)) {
                p.frame(FrameType.RDMA_WRITE, 0, 0, at[2], 1, at[0], at[1], 0, new byte[(int) at[2]]);
                Frame nak = p.next();
                assertEquals(FrameType.NAK, nak.type());
                assertEquals(Frame.Nak.REMOTE_ACCESS, nak.nak());
                assertTrue(p.closedWithin(DROP));
            }
            brokenPassive(passive[0]);
            for (long i = 0; i < whole.byteSize(); i++) {
                assertEquals((byte) 0x3c, whole.get(ValueLayout.JAVA_BYTE, i));
            }
        }
        LocalMemoryRegion stale = f.b.lmr(f.memory(64));
        long staleCtx = stale.rmrContext() & 0xffff_ffffL;
        long staleBase = stale.query().registeredAddress();
        stale.free();
        try (RawPeer p = established(passive)) {
            p.frame(FrameType.RDMA_READ_REQ, 0, 0, 0, 1, staleCtx, staleBase, 64, null);
            Frame nak = p.next();
            assertEquals(FrameType.NAK, nak.type());
            assertEquals(Frame.Nak.REMOTE_ACCESS, nak.nak());
            assertTrue(p.closedWithin(DROP));
        }
        brokenPassive(passive[0]);
        assertHealthy();
    }

    @Test
    void validWriteLandsOnlyInTheRegion() throws IOException {
        Endpoint[] passive = new Endpoint[1];
        try (RawPeer p = established(passive)) {
            byte[] data = new byte[REGION];
            java.util.Arrays.fill(data, (byte) 0x77);
            p.frame(FrameType.RDMA_WRITE, 0, 0, REGION, 1, exposed.rmrContext() & 0xffff_ffffL,
                    exposed.query().registeredAddress(), 0, data);
            Frame ack = p.next();
            assertEquals(FrameType.ACK, ack.type());
            assertEquals(1, ack.seq());
        }
        brokenPassive(passive[0]);
        for (long i = 0; i < REGION; i++) {
            assertEquals((byte) 0x77, whole.get(ValueLayout.JAVA_BYTE, GUARD + i));
        }
        whole.asSlice(GUARD, REGION).fill((byte) 0x3c);
        assertHealthy();
    }

    @Test
    void framesOutOfOrderAreDropped() throws IOException {
        try (RawPeer p = attacker()) {
            p.frame(FrameType.SEND, 0, 0, 4, 1, 0, 0, 0, new byte[4]);
            assertTrue(p.closedWithin(DROP));
        }
        try (RawPeer p = attacker()) {
            p.frame(FrameType.CONNECT_REQ, 0, Frame.VERSION, 2, 0, psp.query().connQual(), 0, 0x1234, new byte[2]);
            assertTrue(p.closedWithin(DROP), "a connect request without the magic");
        }
        Endpoint[] passive = new Endpoint[1];
        int[][] wrong = {{FrameType.ACK.code(), 5}, {FrameType.CONNECT_RTU.code(), 0}, {FrameType.SEND.code(), 9},
            {FrameType.RDMA_READ_RESP.code(), 1}, {FrameType.CONNECT_REQ.code(), 0}, {FrameType.NAK.code(), 1}};
        for (int[] w : wrong) {
            try (RawPeer p = established(passive)) {
                int status = w[0] == FrameType.NAK.code() ? 1 : 0;
                long len = w[0] == FrameType.CONNECT_REQ.code() ? 2 : 0;
                p.frame(w[0], 0, status, len, w[1], 0, 0, 0, new byte[(int) len]);
                assertTrue(p.closedWithin(DROP), "frame type " + w[0]);
            }
            brokenPassive(passive[0]);
        }
        assertHealthy();
    }

    /**
     * A peer that answers a connect request of A with a frame other than delivered, accept, reject or
     * abort breaks the protocol: A drops the connection and the connect fails at once, well before
     * the silence of a peer would end it (3 s after its last frame).
     */
    @Test
    void aFrameOutOfTurnAnsweringAConnectRequestFailsTheConnectAtOnce() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            server.setSoTimeout(8000);
            Endpoint ep = f.a.ep();
            ep.connect(server.getLocalSocketAddress(), 7, TimeUnit.SECONDS.toMicros(60), new byte[0]);
            try (RawPeer p = new RawPeer(server.accept())) {
                assertEquals(FrameType.CONNECT_REQ, p.next().type());
                p.frame(FrameType.RECV_POSTED, 0, 0, 0, 0, 0, 0, 0, null);
                assertTrue(p.closedWithin(Duration.ofSeconds(2)), "the connection was not dropped at once");
            }
            DatEvent e = f.a.evd.waitEvent(TimeUnit.SECONDS.toMicros(10));
            DatEvent.Connection c = assertInstanceOf(DatEvent.Connection.class, e, () -> "got " + e);
            assertEquals(ep, c.ep());
            assertNotEquals(EventNumber.CONNECTION_ESTABLISHED, c.number());
        }
        assertHealthy();
    }

    @Test
    void otherVersionIsRefusedWithAReason() throws IOException {
        try (RawPeer p = attacker()) {
            p.connectRequest(Frame.VERSION + 1, psp.query().connQual(), new byte[0]);
            Frame rej = p.next();
            assertEquals(FrameType.CONNECT_REJECT, rej.type());
            assertEquals(Frame.Reject.NON_PEER, rej.reject());
            assertTrue(new String(p.lastPayload, StandardCharsets.UTF_8).contains("version"));
            assertTrue(p.closedWithin(DROP));
        }
        assertEquals(0, f.b.evd.count(), "no connection request reached the consumer");
        assertHealthy();
    }

    @Test
    void sendIntoReceiveAndRnrNak() throws IOException {
        Endpoint[] passive = new Endpoint[1];
        try (RawPeer p = established(passive)) {
            p.frame(FrameType.SEND, 0, 0, 16, 1, 0, 0, 0, new byte[16]);
            Frame nak = p.next();
            assertEquals(FrameType.NAK, nak.type());
            assertEquals(Frame.Nak.RNR, nak.nak());
            LocalMemoryRegion r = f.b.lmr(f.memory(16));
            passive[0].postRecv(iov(r, 0, 16), 5, none());
            assertEquals(FrameType.RECV_POSTED, p.next().type());
            byte[] msg = new byte[16];
            java.util.Arrays.fill(msg, (byte) 9);
            p.frame(FrameType.SEND, 0, 0, 16, 1, 0, 0, 0, msg);
            assertEquals(FrameType.ACK, p.next().type());
            DatEvent.DtoCompletion c = f.b.nextDto();
            assertEquals(DtoStatus.SUCCESS, c.status());
            assertEquals((byte) 9, r.segment().get(ValueLayout.JAVA_BYTE, 15));
        }
        brokenPassive(passive[0]);
        assertHealthy();
    }

    @Test
    void manyUnidentifiedConnectionsStayBounded() throws IOException {
        RawPeer[] peers = new RawPeer[64];
        try {
            for (int i = 0; i < peers.length; i++) {
                peers[i] = attacker();
                peers[i].raw(new byte[] {1, 2, 3});
            }
            assertHealthy();
            assertTrue(peers[0].closedWithin(DROP), "a connection that never sent a request is dropped");
        } finally {
            for (RawPeer p : peers) {
                if (p != null) {
                    p.close();
                }
            }
        }
        assertHealthy();
    }

    @Test
    void rdmaReadByAttackerReturnsExactlyTheRegion() throws IOException {
        Endpoint[] passive = new Endpoint[1];
        exposed.segment().fill((byte) 0x61);
        try (RawPeer p = established(passive)) {
            p.frame(FrameType.RDMA_READ_REQ, 0, 0, 0, 1, exposed.rmrContext() & 0xffff_ffffL,
                    exposed.query().registeredAddress() + 100, 200, null);
            Frame resp = p.next();
            assertEquals(FrameType.RDMA_READ_RESP, resp.type());
            assertEquals(200, resp.length());
            for (byte b : p.lastPayload) {
                assertEquals((byte) 0x61, b);
            }
        }
        brokenPassive(passive[0]);
        whole.asSlice(GUARD, REGION).fill((byte) 0x3c);
        assertHealthy();
    }

    @Test
    void randomFramesOnAnEstablishedConnectionNeverWriteOutsideTheRegion() throws IOException {
        Random random = new Random(42);
        Endpoint[] passive = new Endpoint[1];
        long base = exposed.query().registeredAddress();
        for (int round = 0; round < 20; round++) {
            try (RawPeer p = established(passive)) {
                for (int k = 0; k < 8; k++) {
                    int type = 1 + random.nextInt(16);
                    long len = random.nextInt(4) == 0 ? random.nextInt(64) : random.nextInt(6000);
                    long a = random.nextBoolean() ? exposed.rmrContext() & 0xffff_ffffL : random.nextLong();
                    long b = base + random.nextInt(REGION + 2 * GUARD) - GUARD;
                    long c = random.nextInt(8000);
                    int status = random.nextInt(4);
                    try {
                        p.frame(type, random.nextInt(4) == 0 ? random.nextInt(4) : 0, status, len, 1 + k, a, b, c,
                                new byte[(int) len]);
                    } catch (IOException e) {
                        break;
                    }
                }
                p.closedWithin(Duration.ofMillis(200));
            }
            f.b.ia.query();
            for (long i = 0; i < GUARD; i++) {
                assertEquals((byte) 0x3c, whole.get(ValueLayout.JAVA_BYTE, i));
                assertEquals((byte) 0x3c, whole.get(ValueLayout.JAVA_BYTE, GUARD + REGION + i));
            }
            DatEvent e;
            while ((e = f.b.evd.dequeue().orElse(null)) != null) {
                if (e instanceof DatEvent.Connection c && c.ep() == healthy[1]) {
                    throw new AssertionError("the healthy connection got " + c.number());
                }
            }
        }
        assertHealthy();
    }
}
