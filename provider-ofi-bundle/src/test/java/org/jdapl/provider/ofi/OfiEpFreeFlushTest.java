package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
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
 * FREE_06 as jdapl's soak counts it ({@code epfree}): {@code dat_ep_free} of a connected EP with
 * receives and sends outstanding (the peer posted no receive) completes each of them FLUSHED, exactly
 * once, on its EVD before free returns; nothing comes after. On tcp (MSG) and on shm (RDM).
 */
class OfiEpFreeFlushTest {
    @Test
    void FREE_06_freeFlushesEveryOutstandingDtoOnceOnTcp() {
        run("tcp lo");
    }

    @Test
    void FREE_06_freeFlushesEveryOutstandingDtoOnceOnShm() {
        run("shm");
    }

    private static void run(String params) {
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
            PublicServicePoint psp = b.createPspAny(bCr, PspFlag.CONSUMER);
            Endpoint ea = a.createEp(pa, aDto, aDto, aConn, null);
            Endpoint eb = b.createEp(b.createPz(), bDto, bDto, bConn, null);
            LocalMemoryRegion la = a.createLmr(pa, arena.allocate(1024), EnumSet.allOf(MemPriv.class), VaType.VA);
            ea.connect(b.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0]);
            ((DatEvent.ConnectionRequest) bCr.waitEvent(5_000_000, 1)).request().accept(eb, new byte[0]);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, aConn.waitEvent(5_000_000, 1).number());
            Set<Long> posted = new HashSet<>();
            for (long c = 1; c <= 4; c++) {
                ea.postRecv(List.of(new LmrTriplet(la, 64 * c, 64)), c, null);
                posted.add(c);
            }
            for (long c = 11; c <= 12; c++) {
                ea.postSend(List.of(new LmrTriplet(la, 0, 64)), c, null);
                posted.add(c);
            }
            ea.free();
            Set<Long> flushed = new HashSet<>();
            for (Optional<DatEvent> e; (e = aDto.dequeue()).isPresent();) {
                DatEvent.DtoCompletion d = (DatEvent.DtoCompletion) e.get();
                assertEquals(DtoStatus.FLUSHED, d.status(), d::toString);
                assertTrue(flushed.add(d.cookie()), "cookie " + d.cookie() + " completed twice");
            }
            assertEquals(posted, flushed, "the DTOs completed by the time dat_ep_free returned");
            Thread.sleep(500);
            assertTrue(aDto.dequeue().isEmpty(), "an event after free");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            p.deactivate();
        }
    }
}
