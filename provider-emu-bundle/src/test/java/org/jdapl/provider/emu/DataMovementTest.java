package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.junit.jupiter.api.Test;

class DataMovementTest {

    /** Bytes {@code [from, to)} of {@code m} hold {@code inside}, the bytes just outside {@code outside}. */
    private static void assertEdges(MemorySegment m, long from, long to, int outside, int inside) {
        assertEquals(outside, m.get(ValueLayout.JAVA_BYTE, from - 1));
        assertEquals(inside, m.get(ValueLayout.JAVA_BYTE, from));
        assertEquals(inside, m.get(ValueLayout.JAVA_BYTE, to - 1));
        assertEquals(outside, m.get(ValueLayout.JAVA_BYTE, to));
    }

    @Test
    void sendArrivesByteForByteInOrder() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment src = f.memory(4096);
            MemorySegment dst = MemorySegment.ofArray(new byte[4096]);
            for (int i = 0; i < 4096; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            LocalMemoryRegion sl = f.a.lmr(src);
            LocalMemoryRegion dl = f.b.lmr(dst);
            for (int i = 0; i < 4; i++) {
                eps[1].postRecv(iov(dl, i * 1024L, 1024), 100 + i, none());
            }
            for (int i = 0; i < 4; i++) {
                eps[0].postSend(List.of(new LmrTriplet(sl, i * 1024L, 512), new LmrTriplet(sl, i * 1024L + 512, 512)),
                        i, none());
            }
            for (int i = 0; i < 4; i++) {
                DatEvent.DtoCompletion c = f.a.nextDto();
                assertEquals(i, c.cookie());
                assertEquals(DtoStatus.SUCCESS, c.status());
                assertEquals(1024, c.transferredLength());
            }
            for (int i = 0; i < 4; i++) {
                DatEvent.DtoCompletion c = f.b.nextDto();
                assertEquals(100 + i, c.cookie());
                assertEquals(DtoOperation.RECEIVE, c.operation());
                assertEquals(DtoStatus.SUCCESS, c.status());
            }
            assertArrayEquals(src.toArray(ValueLayout.JAVA_BYTE), dst.toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /** OBJ_07: a send gathered from uneven pieces lands scattered over uneven pieces, and nowhere else. */
    @Test
    void obj07SendScattersAcrossUnevenPiecesAndNothingOutside() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment src = f.memory(2048);
            MemorySegment dst = MemorySegment.ofArray(new byte[4096]);
            for (int i = 0; i < 2048; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
            }
            dst.fill((byte) -1);
            LocalMemoryRegion sl = f.a.lmr(src);
            LocalMemoryRegion dl = f.b.lmr(dst);
            eps[1].postRecv(List.of(new LmrTriplet(dl, 10, 700), new LmrTriplet(dl, 2000, 400)), 7, none());
            eps[0].postSend(List.of(new LmrTriplet(sl, 5, 100), new LmrTriplet(sl, 1000, 300),
                    new LmrTriplet(sl, 1400, 624)), 1, none());
            assertEquals(1024, f.b.nextDto().transferredLength());
            byte[] sent = new byte[1024];
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, 5, sent, 0, 100);
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, 1000, sent, 100, 300);
            MemorySegment.copy(src, ValueLayout.JAVA_BYTE, 1400, sent, 400, 624);
            byte[] received = new byte[1024];
            MemorySegment.copy(dst, ValueLayout.JAVA_BYTE, 10, received, 0, 700);
            MemorySegment.copy(dst, ValueLayout.JAVA_BYTE, 2000, received, 700, 324);
            assertArrayEquals(sent, received);
            assertEquals(-1, dst.get(ValueLayout.JAVA_BYTE, 9));
            assertEquals(-1, dst.get(ValueLayout.JAVA_BYTE, 710));
            assertEquals(-1, dst.get(ValueLayout.JAVA_BYTE, 1999));
            assertEquals(-1, dst.get(ValueLayout.JAVA_BYTE, 2324));
        }
    }

    @Test
    void rdmaWriteAndReadMoveExactlyTheNamedBytes() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment local = f.memory(256);
            MemorySegment remote = f.memory(1024);
            local.fill((byte) 0x5a);
            LocalMemoryRegion ll = f.a.lmr(local);
            LocalMemoryRegion rl = f.b.lmr(remote);
            long base = rl.query().registeredAddress();
            eps[0].postRdmaWrite(iov(ll, 0, 100), 1, new RmrTriplet(rl.rmrContext(), base + 10, 100), none());
            DatEvent.DtoCompletion w = f.a.nextDto();
            assertEquals(DtoStatus.SUCCESS, w.status());
            assertEquals(DtoOperation.RDMA_WRITE, w.operation());
            assertEdges(remote, 10, 110, 0, 0x5a);

            remote.asSlice(500, 50).fill((byte) 0x33);
            eps[0].postRdmaRead(iov(ll, 200, 50), 2, new RmrTriplet(rl.rmrContext(), base + 500, 50), none());
            DatEvent.DtoCompletion r = f.a.nextDto();
            assertEquals(DtoStatus.SUCCESS, r.status());
            assertEquals(DtoOperation.RDMA_READ, r.operation());
            assertEdges(local, 200, 250, 0x5a, 0x33);
        }
    }

    @Test
    void abruptDisconnectFlushesAndReportsOnBothSides() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            f.abruptDisconnectFlushesThePeer(eps);
            assertEquals(EpState.DISCONNECTED, eps[0].query().state());
            assertEquals(EpState.DISCONNECTED, eps[1].query().state());
            DatException e = assertThrows(DatException.class,
                    () -> eps[0].postSend(iov(f.a.lmr(f.memory(8)), 0, 0), 1, none()));
            assertEquals(DatReturnType.INVALID_STATE, e.type());
            eps[0].disconnect(CloseFlag.ABRUPT);
            assertEquals(0, f.a.evd.count());
        }
    }
}
