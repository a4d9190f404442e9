package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Dat;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A connection over RDM endpoints end to end, both IAs in this JVM: PSP, connect with private data,
 * accept with private data, a 64-byte send into a posted receive, a graceful disconnect seen at both
 * sides; on shm and on {@code tcp;ofi_rxm} over {@code lo}. The whole kit is OfiShmConformanceTest.
 */
class OfiRdmSmokeTest {
    @Test
    void conn03Obj07Disc01ConnectSendDisconnectOnShm() {
        run("shm");
    }

    @Test
    void conn03Obj07Disc01ConnectSendDisconnectOnTcpRxm() {
        run("tcp;ofi_rxm lo");
    }

    private void run(String params) {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (InterfaceAdapter a = p.open(new IaSpec("a", params, "", true, "t"), 8);
             InterfaceAdapter b = p.open(new IaSpec("b", params, "", true, "t"), 8);
             Arena arena = Arena.ofShared()) {
            EventDispatcher aDto = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher aConn = a.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bDto = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher bConn = b.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            ProtectionZone pa = a.createPz();
            ProtectionZone pb = b.createPz();
            PublicServicePoint psp = b.createPsp(4711, bCr, PspFlag.CONSUMER);
            Endpoint ea = a.createEp(pa, aDto, aDto, aConn, null);
            Endpoint eb = b.createEp(pb, bDto, bDto, bConn, null);
            MemorySegment ma = arena.allocate(64);
            MemorySegment mb = arena.allocate(64);
            LocalMemoryRegion la = a.createLmr(pa, ma, EnumSet.allOf(MemPriv.class), VaType.VA);
            LocalMemoryRegion lb = b.createLmr(pb, mb, EnumSet.allOf(MemPriv.class), VaType.VA);
            eb.postRecv(List.of(new LmrTriplet(lb, 0, 64)), 7, null);
            ea.connect(b.query().attributes().address(), 4711, 5_000_000, new byte[] {1, 2, 3}, org.jdapl.dat.Qos.BEST_EFFORT,
                    org.jdapl.dat.ConnectFlag.DEFAULT);
            DatEvent e = bCr.waitEvent(5_000_000, 1);
            DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) e;
            assertEquals(3, cr.request().query().privateData().length);
            cr.request().accept(eb, new byte[] {9});
            DatEvent.Connection c = (DatEvent.Connection) aConn.waitEvent(5_000_000, 1);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, c.number());
            ma.fill((byte) 42);
            ea.postSend(List.of(new LmrTriplet(la, 0, 64)), 8, null);
            DatEvent.DtoCompletion s = (DatEvent.DtoCompletion) aDto.waitEvent(5_000_000, 1);
            assertEquals(org.jdapl.dat.DtoStatus.SUCCESS, s.status());
            DatEvent.DtoCompletion r = (DatEvent.DtoCompletion) bDto.waitEvent(5_000_000, 1);
            assertEquals(org.jdapl.dat.DtoStatus.SUCCESS, r.status());
            assertEquals(64, r.transferredLength());
            assertEquals(42, mb.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 10));
            c = (DatEvent.Connection) bConn.waitEvent(5_000_000, 1);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, c.number());
            ea.disconnect(CloseFlag.GRACEFUL);
            c = (DatEvent.Connection) aConn.waitEvent(5_000_000, 1);
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, c.number());
            c = (DatEvent.Connection) bConn.waitEvent(5_000_000, 1);
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, c.number());
            psp.free();
        } finally {
            p.deactivate();
        }
    }
}
