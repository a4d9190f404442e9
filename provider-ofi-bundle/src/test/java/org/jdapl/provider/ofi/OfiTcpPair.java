package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;

/**
 * Two ofi IAs on {@code tcp lo} in this JVM, an EP of each connected to the other (queues of
 * {@link #DEPTH}), with a 256-byte region registered at each side: the set-up of the tests that
 * drive one connection by hand. A host without libfabric skips the test.
 */
final class OfiTcpPair implements AutoCloseable {
    static final long WAIT_MICROS = 5_000_000L;
    static final int DEPTH = 8;

    final InterfaceAdapter a;
    final InterfaceAdapter b;
    final Arena arena = Arena.ofShared();
    final EventDispatcher aReq;
    final EventDispatcher aConn;
    final EventDispatcher bRecv;
    final Endpoint ea;
    final Endpoint eb;
    final MemorySegment ma;
    final MemorySegment mb;
    final LocalMemoryRegion la;
    final LocalMemoryRegion lb;

    OfiTcpPair() {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        a = p.open(new IaSpec("a", "tcp lo", "", true, "t"), 8);
        b = p.open(new IaSpec("b", "tcp lo", "", true, "t"), 8);
        aReq = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
        EventDispatcher aRecv = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
        aConn = a.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
        EventDispatcher bReq = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
        bRecv = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
        EventDispatcher bConn = b.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
        EventDispatcher bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
        ProtectionZone pa = a.createPz();
        ProtectionZone pb = b.createPz();
        PublicServicePoint psp = b.createPspAny(bCr, PspFlag.CONSUMER);
        EpAttributes depths = EpAttributes.defaults().withQueueDepths(DEPTH, DEPTH);
        ea = a.createEp(pa, aRecv, aReq, aConn, depths);
        eb = b.createEp(pb, bRecv, bReq, bConn, depths);
        ma = arena.allocate(64 * 4);
        mb = arena.allocate(64 * 4);
        la = a.createLmr(pa, ma, EnumSet.allOf(MemPriv.class), VaType.VA);
        lb = b.createLmr(pb, mb, EnumSet.allOf(MemPriv.class), VaType.VA);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0]);
        DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class,
                bCr.waitEvent(WAIT_MICROS));
        cr.request().accept(eb, new byte[0]);
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) aConn.waitEvent(WAIT_MICROS)).number());
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) bConn.waitEvent(WAIT_MICROS)).number());
    }

    @Override
    public void close() {
        a.close(CloseFlag.ABRUPT);
        b.close(CloseFlag.ABRUPT);
        arena.close();
    }
}
