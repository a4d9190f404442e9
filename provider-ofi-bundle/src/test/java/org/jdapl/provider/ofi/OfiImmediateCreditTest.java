package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * An RDMA Write with immediate data consumes a receive at the peer, so on ofi tcp's MSG endpoints it
 * takes a receive credit as a send does: with no receive posted at the peer it stays outstanding at
 * the sender, none of its bytes reach the peer, and an abrupt disconnect flushes it once as
 * RDMA_WRITE_IMMED while the peer sees the disconnect (the DISC_02/DISC_03 rules for sends, EXT_07).
 */
class OfiImmediateCreditTest {
    private static final long WAIT_NANOS = 5_000_000_000L;

    @Test
    void ext07Disc02WriteWithImmediateWaitsForAReceiveAndIsFlushedOnce() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (InterfaceAdapter a = p.open(new IaSpec("a", "tcp lo", "", true, "t"), 8);
             InterfaceAdapter b = p.open(new IaSpec("b", "tcp lo", "", true, "t"), 8);
             Arena arena = Arena.ofShared()) {
            EventDispatcher aDto = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher aConn = a.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bDto = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher bConn = b.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            ProtectionZone pa = a.createPz();
            ProtectionZone pb = b.createPz();
            PublicServicePoint psp = b.createPspAny(bCr, PspFlag.CONSUMER);
            Endpoint ea = a.createEp(pa, aDto, aDto, aConn, null);
            Endpoint eb = b.createEp(pb, bDto, bDto, bConn, null);
            MemorySegment ma = arena.allocate(64);
            MemorySegment mb = arena.allocate(64);
            ma.fill((byte) 42);
            LocalMemoryRegion la = a.createLmr(pa, ma, EnumSet.allOf(MemPriv.class), VaType.VA);
            LocalMemoryRegion lb = b.createLmr(pb, mb, EnumSet.allOf(MemPriv.class), VaType.VA);
            ea.connect(b.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0], Qos.BEST_EFFORT,
                    ConnectFlag.DEFAULT);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, next(bCr));
            cr.request().accept(eb, new byte[0]);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) next(aConn)).number());
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) next(bConn)).number());

            var target = lb.query();
            ea.postRdmaWriteWithImmediate(List.of(new LmrTriplet(la, 0, 32)), 1,
                    new RmrTriplet(target.rmrContext(), target.registeredAddress(), 32), 0x1234, null);
            Thread.sleep(300);
            assertTrue(aDto.dequeue().isEmpty(), "the RDMA Write with immediate data completed with no receive posted"
                    + " at the peer");
            for (int i = 0; i < 64; i++) {
                assertEquals(0, mb.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i),
                        "byte " + i + " of the peer's region was written with no receive posted for the write's message");
            }
            ea.disconnect(CloseFlag.ABRUPT);
            DatEvent.ExtendedDtoCompletion flushed = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, next(aDto));
            assertEquals(1L, flushed.cookie());
            assertEquals(DtoStatus.FLUSHED, flushed.status());
            assertEquals(ExtensionType.RDMA_WRITE_IMMED, flushed.type());
            DatEvent.Connection end = assertInstanceOf(DatEvent.Connection.class, next(bConn));
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, end.number(), "the peer's end of the connection");
            Thread.sleep(200);
            assertTrue(aDto.dequeue().isEmpty(), "a second completion of the flushed DTO");
            assertTrue(bDto.dequeue().isEmpty(), "a completion at the peer");
        }
    }

    /** The next event of {@code evd}, polled for at most {@link #WAIT_NANOS}. */
    private static DatEvent next(EventDispatcher evd) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (System.nanoTime() < deadline) {
            Optional<DatEvent> e = evd.dequeue();
            if (e.isPresent()) {
                return e.get();
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        throw new AssertionError("no event within 5 s on " + evd);
    }
}
