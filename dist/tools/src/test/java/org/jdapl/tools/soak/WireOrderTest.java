package org.jdapl.tools.soak;

import static org.jdapl.tools.soak.WireFrames.frame;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.jdapl.dat.DatRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Frames that reach the emulated tcp fabric in the same TCP segment as the handshake's last frame.
 * The soak found RDMA Writes landing a few bytes away from their address on some connections: the
 * passive side's input buffer grows when the connection is established, and the bytes already
 * buffered behind the ready-to-use frame then shifted every payload copied out of the new buffer by
 * their number.
 */
@Timeout(60)
class WireOrderTest {
    @TempDir
    Path dir;

    @Test
    void anRdmaWriteArrivingWithTheReadyToUseLandsWhereItIsAddressed() throws Exception {
        Path conf = dir.resolve("dat.conf");
        Files.writeString(conf, "victim u2.0 threadsafe default emu emu.1.0 \"tcp 127.0.0.1:0\" \"\"\n");
        String previous = System.setProperty("dat.conf", conf.toString());
        DatRegistry registry = DatRegistry.standalone();
        if (previous == null) {
            System.clearProperty("dat.conf");
        } else {
            System.setProperty("dat.conf", previous);
        }
        try (Responder victim = new Responder(registry, "victim", 0x57, 2, 4096);
             Socket s = new Socket()) {
            s.connect(victim.address(), 5_000);
            s.setSoTimeout(10_000);
            s.setTcpNoDelay(true);
            s.getOutputStream().write(WireFrames.connectRequest(victim.connQual(), 0x80000001L, 1));
            DataInputStream in = WireFrames.input(s.getInputStream());
            byte[] pd = new byte[Responder.PRIVATE_DATA];
            WireFrames.Header h;
            do {
                h = WireFrames.read(in, pd);
            } while (h.type() != WireFrames.CONNECT_ACCEPT);
            ByteBuffer b = ByteBuffer.wrap(pd);
            long ctx = b.getInt() & 0xffffffffL;
            long addr = b.getLong();
            byte[] data = new byte[100];
            new Random(25).nextBytes(data);
            // In one write: the ready-to-use, a first RDMA Write sized so that the 2 KiB the victim reads
            // before its buffer grows end 20 bytes into the header of a second RDMA Write, and an RDMA
            // Read of what the second one wrote.
            ByteArrayOutputStream burst = new ByteArrayOutputStream();
            burst.write(frame(WireFrames.CONNECT_RTU, 0, 0, 0, 0, 0, null));
            burst.write(frame(WireFrames.RDMA_WRITE, 0, 1, ctx, addr + 2048, 0, new byte[2048 - 3 * 40 + 20]));
            burst.write(frame(WireFrames.RDMA_WRITE, 0, 2, ctx, addr + 64, 0, data));
            burst.write(frame(WireFrames.RDMA_READ_REQ, 0, 3, ctx, addr + 64, data.length, null));
            s.getOutputStream().write(burst.toByteArray());
            byte[] back = new byte[data.length];
            do {
                h = WireFrames.read(in, back);
            } while (h.type() == WireFrames.ACK || h.type() == WireFrames.KEEPALIVE);
            assertEquals(WireFrames.RDMA_READ_RESP, h.type(), "the read is answered");
            assertArrayEquals(data, back, "the bytes read are the bytes written at that address");
        }
    }
}
