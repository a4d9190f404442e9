package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.EnumSet;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.provider.emu.tcp.Frame;
import org.jdapl.provider.emu.tcp.FrameType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * OFED's extended DTOs on the tcp fabric (PROTOCOL.md, "Extensions"): the FETCH_ADD, CMP_SWAP,
 * ATOMIC_RESP and RDMA_WRITE_IMM frames between two IAs of this JVM. The conformance kit's EXT cases
 * run against a peer in another JVM; these pin what the kit does not reach: the RNR retry of an RDMA
 * Write with immediate data, the refusal of an atomic, and the frames' header checks.
 */
@Timeout(60)
class TcpExtensionsTest {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;

    private static DatEvent.ExtendedDtoCompletion extended(Fixture.Side side) {
        DatEvent e = side.next();
        return assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, e, () -> "got " + e);
    }

    private static LocalMemoryRegion atomicTarget(Fixture f, MemorySegment mem) {
        return f.b.ia.createLmr(f.b.pz, mem, EnumSet.allOf(MemPriv.class), VaType.VA);
    }

    /** EXT_01: the tcp IA names the extensions; atomics fetch the old value and leave the new one. */
    @Test
    void EXT_01_atomicsOverTcpFetchTheOldValue() {
        try (Fixture f = Fixture.tcp()) {
            ProviderAttributes p = f.a.ia.query().provider();
            assertEquals("TRUE", p.specific().get(ProviderAttributes.DAT_IB_FETCH_AND_ADD));
            assertEquals("TRUE", p.specific().get(ProviderAttributes.DAT_IB_IMMED_DATA));
            Endpoint[] eps = f.connect();
            MemorySegment targetMem = f.memory(16);
            targetMem.set(U64, 8, 40);
            LocalMemoryRegion target = atomicTarget(f, targetMem);
            long base = target.query().registeredAddress();
            MemorySegment localMem = f.memory(8);
            LocalMemoryRegion local = f.a.lmr(localMem);
            RmrTriplet remote = new RmrTriplet(target.rmrContext(), base + 8, 8);

            eps[0].postFetchAndAdd(2, iov(local, 0, 8).getFirst(), 1, remote, none());
            DatEvent.ExtendedDtoCompletion x = extended(f.a);
            assertEquals(DtoStatus.SUCCESS, x.status());
            assertEquals(ExtensionType.FETCH_AND_ADD, x.type());
            assertEquals(8, x.transferredLength());
            assertEquals(40, localMem.get(U64, 0));
            assertEquals(42, targetMem.get(U64, 8));

            eps[0].postCompareAndSwap(42, -5, iov(local, 0, 8).getFirst(), 2, remote, none());
            x = extended(f.a);
            assertEquals(DtoStatus.SUCCESS, x.status());
            assertEquals(ExtensionType.CMP_AND_SWAP, x.type());
            assertEquals(42, localMem.get(U64, 0));
            assertEquals(-5, targetMem.get(U64, 8));
        }
    }

    /**
     * EXT_01: a target whose region does not grant REMOTE_ATOMIC is refused at the responder: the
     * atomic completes REMOTE_ACCESS, the target is untouched, and the connection breaks as RC does.
     */
    @Test
    void EXT_01_anAtomicOnARegionWithoutRemoteAtomicCompletesRemoteAccess() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            MemorySegment targetMem = f.memory(8);
            targetMem.set(U64, 0, 7);
            LocalMemoryRegion plain = f.b.lmr(targetMem);
            LocalMemoryRegion local = f.a.lmr(f.memory(8));
            RmrTriplet remote = new RmrTriplet(plain.rmrContext(), plain.query().registeredAddress(), 8);
            eps[0].postCompareAndSwap(7, 9, iov(local, 0, 8).getFirst(), 3, remote, none());
            DatEvent.ExtendedDtoCompletion x = extended(f.a);
            assertEquals(DtoStatus.REMOTE_ACCESS, x.status());
            assertEquals(ExtensionType.CMP_AND_SWAP, x.type());
            assertEquals(7, targetMem.get(U64, 0));
            f.a.nextConnection(EventNumber.CONNECTION_BROKEN);
        }
    }

    /**
     * EXT_05, EXT_06: an RDMA Write with immediate data that finds no receive is refused RNR and sent
     * again when one is posted: the data lands, the receive completes RDMA_WRITE_IMMED_DATA with the
     * immediate data and the write's length, its buffer untouched, and a send after it takes the next
     * receive.
     */
    @Test
    void EXT_05_writeWithImmediateWaitsForAReceiveAndConsumesOne() throws InterruptedException {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            MemorySegment src = f.memory(64);
            src.fill((byte) 0x3c);
            LocalMemoryRegion srcLmr = f.a.lmr(src);
            MemorySegment sink = f.memory(64);
            LocalMemoryRegion sinkLmr = f.b.lmr(sink);
            MemorySegment recvMem = f.memory(64);
            LocalMemoryRegion recvLmr = f.b.lmr(recvMem);
            RmrTriplet remote = new RmrTriplet(sinkLmr.rmrContext(), sinkLmr.query().registeredAddress(), 48);

            eps[0].postRdmaWriteWithImmediate(iov(srcLmr, 0, 48), 10, remote, 0xfeedbeef, none());
            eps[0].postSend(iov(srcLmr, 0, 16), 11, none());
            Thread.sleep(100);
            assertEquals(0, sink.get(ValueLayout.JAVA_BYTE, 0), "data placed before a receive was posted");
            eps[1].postRecv(iov(recvLmr, 0, 64), 20, none());
            eps[1].postRecv(iov(recvLmr, 0, 64), 21, none());

            DatEvent.ExtendedDtoCompletion r = extended(f.b);
            assertEquals(20, r.cookie());
            assertEquals(DtoStatus.SUCCESS, r.status());
            assertEquals(ExtensionType.RDMA_WRITE_IMMED_DATA, r.type());
            assertEquals(0xfeedbeef, r.immediateData());
            assertEquals(48, r.transferredLength());
            assertEquals((byte) 0x3c, sink.get(ValueLayout.JAVA_BYTE, 47));
            assertEquals(0, sink.get(ValueLayout.JAVA_BYTE, 48));
            DatEvent.DtoCompletion next = f.b.nextDto();
            assertEquals(21, next.cookie());
            assertEquals(DtoOperation.RECEIVE, next.operation());
            assertEquals(16, next.transferredLength());

            DatEvent.ExtendedDtoCompletion w = extended(f.a);
            assertEquals(10, w.cookie());
            assertEquals(ExtensionType.RDMA_WRITE_IMMED, w.type());
            assertEquals(DtoStatus.SUCCESS, w.status());
            assertEquals(48, w.transferredLength());
            assertEquals(11, f.a.nextDto().cookie());
        }
    }

    /** EXT_01: the extension frames' headers are checked like every other (PROTOCOL.md, "Frames"). */
    @Test
    void EXT_01_extensionFrameHeadersAreChecked() throws Frame.ProtocolException {
        ByteBuffer bb = ByteBuffer.allocate(Frame.HEADER_SIZE);
        Frame.encode(bb, FrameType.CMP_SWAP.code(), 0, 0, 4, 1, 5, 64, 0);
        assertThrows(Frame.ProtocolException.class, () -> Frame.decode(bb.flip()));
        bb.clear();
        Frame.encode(bb, FrameType.RDMA_WRITE_IMM.code(), 0, 0, 8, 1, 5, 64, 1L << 32);
        assertThrows(Frame.ProtocolException.class, () -> Frame.decode(bb.flip()));
        bb.clear();
        Frame.encode(bb, FrameType.FETCH_ADD.code(), 0, 0, 8, 1, 5, 64, 1);
        assertThrows(Frame.ProtocolException.class, () -> Frame.decode(bb.flip()));
        bb.clear();
        Frame.encode(bb, FrameType.RDMA_WRITE_IMM.code(), 0, 0, 8, 1, 5, 64, 0xffff_ffffL);
        Frame h = Frame.decode(bb.flip());
        assertEquals(-1, h.immediateData());
    }
}
