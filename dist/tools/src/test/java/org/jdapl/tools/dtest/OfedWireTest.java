package org.jdapl.tools.dtest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.ToolException;
import org.junit.jupiter.api.Test;

/** OFED dtest's wire formats, byte for byte. */
class OfedWireTest {
    @Test
    void theRmrTripletIsSixteenBytesInNetworkOrder() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(16);
            OfedWire.writeTriplet(s, 0x0102030405060708L, 0x1000, 0xabcdef01);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x10, 0, (byte) 0xab, (byte) 0xcd,
                    (byte) 0xef, 1}, s.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(new RmrTriplet(0xabcdef01, 0x0102030405060708L, 0x1000), OfedWire.readTriplet(s));
        }
    }

    @Test
    void theServerParametersAreOfedsPrintfFormat() throws Exception {
        byte[] msg = OfedWire.paramsMessage(InetAddress.getByName("192.168.77.1"), "ofa-v2-rxe0-1");
        assertEquals(128, msg.length);
        // s_addr as a little-endian host prints it: 192.168.77.1 is 0x014da8c0
        assertEquals("0000:00000000:00000000:014da8c0:ofa-v2-rxe0-1",
                new String(msg, 0, 45, StandardCharsets.US_ASCII));
        assertEquals(0, msg[45]);
        OfedWire.ServerParams p = OfedWire.parseParams(msg);
        assertEquals(InetAddress.getByName("192.168.77.1"), p.address());
        assertEquals("ofa-v2-rxe0-1", p.provider());
        assertThrows(ToolException.class, () -> OfedWire.parseParams(new byte[128]));
    }

    @Test
    void privateDataIsOneToFortyEightAndComesBackPlusOne() {
        byte[] c = OfedWire.connectData();
        OfedWire.checkPattern(c, 1, "request");
        byte[] padded = java.util.Arrays.copyOf(c, 56); // a receiver gets rdma_cm's whole buffer
        byte[] a = OfedWire.acceptData(padded);
        assertEquals(48, a.length);
        OfedWire.checkPattern(a, 2, "accept");
        assertThrows(ToolException.class, () -> OfedWire.checkPattern(c, 2, "accept"));
    }

    /** OFED dtestx's exchange: the server's parameters, then the client's own back on the same socket. */
    @Test
    void dtestxsClientAnswersWithItsOwnParameters() throws Exception {
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        byte[] server = OfedWire.paramsMessage(InetAddress.getByName("192.168.77.1"), "ofa-v2-rxe0-1");
        byte[] client = OfedWire.paramsMessage(InetAddress.getByName("192.168.77.2"), "ofa-v2-rxe0-1u");
        java.util.concurrent.CompletableFuture<OfedWire.ServerParams> offered = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> OfedWire.offerParamsAndReadReply(server, port, 20_000));
        OfedWire.ServerParams got = OfedWire.fetchParams("127.0.0.1", port, 20_000, client);
        assertEquals(InetAddress.getByName("192.168.77.1"), got.address());
        OfedWire.ServerParams back = offered.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(InetAddress.getByName("192.168.77.2"), back.address());
        assertEquals("ofa-v2-rxe0-1u", back.provider());
    }
}
