package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.jdapl.provider.emu.tcp.Frame;
import org.jdapl.provider.emu.tcp.FrameType;

/** Fuzzing of the frame header decoder: it accepts only headers within the protocol's bounds. */
class FrameDecoderFuzzTest {

    @Property(tries = 3000)
    void anyFortyBytesDecodeWithinBoundsOrAreRefused(@ForAll @Size(Frame.HEADER_SIZE) byte[] bytes) {
        check(bytes);
    }

    @Property(tries = 3000)
    void plausibleHeadersDecodeWithinBoundsOrAreRefused(@ForAll("plausible") byte[] bytes) {
        check(bytes);
    }

    @Property(tries = 1000)
    void encodedHeadersDecodeToTheSameFields(@ForAll("valid") long[] f) {
        ByteBuffer b = ByteBuffer.allocate(Frame.HEADER_SIZE);
        Frame.encode(b, (int) f[0], 0, (int) f[1], f[2], f[3], f[4], f[5], f[6]);
        b.flip();
        try {
            Frame h = Frame.decode(b);
            assertEquals(f[0], h.type().code());
            assertEquals(f[2], h.length());
            assertEquals(f[3], h.seq());
            assertEquals(f[4], h.rmrContext());
            assertEquals(f[5], h.targetAddress());
            assertEquals(f[6], h.readLength());
        } catch (Frame.ProtocolException e) {
            throw new AssertionError("a valid header was refused: " + e.getMessage(), e);
        }
    }

    private static void check(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        Frame h;
        try {
            h = Frame.decode(b);
        } catch (Frame.ProtocolException e) {
            assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
            return;
        }
        assertEquals(Frame.HEADER_SIZE, b.position());
        assertTrue(h.type() != null && h.type().code() == (bytes[0] & 0xff), "type " + h.type());
        assertTrue(h.length() >= 0 && h.length() <= Frame.MAX_DATA, "length " + h.length());
        boolean data = h.type() == FrameType.SEND || h.type() == FrameType.RDMA_WRITE
                || h.type() == FrameType.RDMA_READ_RESP;
        if (!data) {
            assertTrue(h.length() <= Frame.MAX_CONTROL, h.type() + " of " + h.length() + " bytes");
        }
        if (h.type() == FrameType.RDMA_READ_REQ) {
            assertTrue(h.readLength() >= 0 && h.readLength() <= Frame.MAX_DATA);
        }
    }

    @Provide
    Arbitrary<byte[]> plausible() {
        return Combinators.combine(Arbitraries.integers().between(0, 17), Arbitraries.integers().between(0, 4),
                Arbitraries.integers().between(0, 4), Arbitraries.longs().between(0, 0xffff_ffffL),
                Arbitraries.longs(), Arbitraries.longs()).as((type, flags, status, length, seq, c) -> {
                    ByteBuffer b = ByteBuffer.allocate(Frame.HEADER_SIZE);
                    Frame.encode(b, type, flags, status, length, seq, seq ^ c, c, c);
                    return b.array();
                });
    }

    @Provide
    Arbitrary<long[]> valid() {
        return Combinators.combine(Arbitraries.of(FrameType.SEND, FrameType.RDMA_WRITE, FrameType.RDMA_READ_RESP,
                        FrameType.ACK, FrameType.KEEPALIVE, FrameType.DISCONNECT).map(FrameType::code),
                Arbitraries.longs().between(0, Frame.MAX_DATA),
                Arbitraries.longs(), Arbitraries.longs(), Arbitraries.longs())
                .as((type, length, seq, a, b) -> {
                    boolean data = type == FrameType.SEND.code() || type == FrameType.RDMA_WRITE.code()
                            || type == FrameType.RDMA_READ_RESP.code();
                    return new long[] {type, 0, data ? length : 0, seq, a, b, 0};
                });
    }
}
