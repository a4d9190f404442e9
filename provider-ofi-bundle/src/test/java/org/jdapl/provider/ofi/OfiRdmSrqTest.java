package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * An SRQ on a shm IA (both IAs in this JVM) shared by two EPs ({@link RdmSrq}): its receives are
 * lent two at a time to each EP; when one EP's connection ends, the receives lent to it go back to
 * the SRQ, none is flushed, and the other EP takes every one of them.
 */
class OfiRdmSrqTest {
    private static final long WAIT = 5_000_000;

    @Test
    void srq01Ep01ReceivesLentToADisconnectedEpGoToTheOtherOnShm() {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (Shm shm = new Shm(p, 4712)) {
            InterfaceAdapter a = shm.a;
            InterfaceAdapter b = shm.b;
            EventDispatcher aDto = shm.aDto;
            EventDispatcher aConn = shm.aConn;
            EventDispatcher bDto = shm.bDto;
            EventDispatcher bConn = shm.bConn;
            ProtectionZone pa = shm.pa;
            ProtectionZone pb = shm.pb;
            SharedReceiveQueue srq = shm.srq;
            Endpoint a1 = a.createEp(pa, aDto, aDto, aConn, null);
            Endpoint a2 = a.createEp(pa, aDto, aDto, aConn, null);
            Endpoint b1 = b.createEpWithSrq(pb, bDto, bDto, bConn, srq, EpAttributes.defaults());
            Endpoint b2 = b.createEpWithSrq(pb, bDto, bDto, bConn, srq, EpAttributes.defaults());
            shm.connect(a1, b1);
            shm.connect(a2, b2);
            MemorySegment ma = shm.arena.allocate(64);
            MemorySegment mb = shm.arena.allocate(4 * 64);
            LocalMemoryRegion la = a.createLmr(pa, ma, EnumSet.allOf(MemPriv.class), VaType.VA);
            LocalMemoryRegion lb = b.createLmr(pb, mb, EnumSet.allOf(MemPriv.class), VaType.VA);
            for (int i = 0; i < 4; i++) {
                srq.postRecv(List.of(new LmrTriplet(lb, 64L * i, 64)), 100 + i); // two lent to b1, two to b2
            }
            a1.disconnect(CloseFlag.ABRUPT);
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, ((DatEvent.Connection) aConn.waitEvent(WAIT, 1)).number());
            DatEvent.Connection end = (DatEvent.Connection) bConn.waitEvent(WAIT, 1);
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, end.number());
            assertSame(b1, end.ep());
            Set<Long> cookies = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                ma.fill((byte) (10 + i));
                a2.postSend(List.of(new LmrTriplet(la, 0, 64)), 200 + i, null);
                DatEvent.DtoCompletion s = (DatEvent.DtoCompletion) aDto.waitEvent(WAIT, 1);
                assertEquals(DtoStatus.SUCCESS, s.status(), "send " + i);
                DatEvent e = bDto.waitEvent(WAIT, 1);
                DatEvent.DtoCompletion r = assertInstanceOf(DatEvent.DtoCompletion.class, e, "receive " + i);
                assertEquals(DtoStatus.SUCCESS, r.status(), "receive " + i + " (cookie " + r.cookie() + ")");
                assertSame(b2, r.ep(), "receive " + i);
                cookies.add(r.cookie());
            }
            assertEquals(Set.of(100L, 101L, 102L, 103L), cookies, "the SRQ's receives b2 took");
            assertEquals(0, srq.query().availableDtoCount(), "receives left on the SRQ");
            a2.disconnect(CloseFlag.GRACEFUL);
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, ((DatEvent.Connection) aConn.waitEvent(WAIT, 1)).number());
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, ((DatEvent.Connection) bConn.waitEvent(WAIT, 1)).number());
        } finally {
            p.deactivate();
        }
    }

    /**
     * DISC_02 on an SRQ: a send to an EP on an SRQ with no receive posted stays outstanding (the
     * peer counts no receives, so it goes without a credit and with delivery-complete), and the
     * sender's abrupt disconnect flushes it: it never completes SUCCESS.
     */
    @Test
    void disc02SrqASendToAnSrqWithoutReceiveStaysOutstandingAndFlushesOnShm() throws InterruptedException {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (Shm shm = new Shm(p, 4713)) {
            EventDispatcher aDto = shm.aDto;
            EventDispatcher aConn = shm.aConn;
            Endpoint a1 = shm.a.createEp(shm.pa, aDto, aDto, aConn, null);
            shm.connect(a1, shm.b.createEpWithSrq(shm.pb, shm.bDto, shm.bDto, shm.bConn, shm.srq, EpAttributes.defaults()));
            MemorySegment ma = shm.arena.allocate(64);
            LocalMemoryRegion la = shm.a.createLmr(shm.pa, ma, EnumSet.allOf(MemPriv.class), VaType.VA);
            a1.postSend(List.of(new LmrTriplet(la, 0, 64)), 7, null);
            Thread.sleep(300);
            assertFalse(aDto.dequeue(new EventSlot()), "the send completed though the SRQ has no receive");
            a1.disconnect(CloseFlag.ABRUPT);
            DatEvent.DtoCompletion s = assertInstanceOf(DatEvent.DtoCompletion.class, aDto.waitEvent(WAIT, 1));
            assertEquals(7, s.cookie());
            assertEquals(DtoStatus.FLUSHED, s.status(), "the outstanding send at the abrupt disconnect");
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, ((DatEvent.Connection) aConn.waitEvent(WAIT, 1)).number());
        } finally {
            p.deactivate();
        }
    }

    /** Two shm IAs of this JVM: {@code a}'s EVDs and PZ; {@code b}'s, a PSP on {@code port} and an SRQ of 4. */
    private static final class Shm implements AutoCloseable {
        final InterfaceAdapter a;
        final InterfaceAdapter b;
        final Arena arena = Arena.ofShared();
        final EventDispatcher aDto;
        final EventDispatcher aConn;
        final EventDispatcher bDto;
        final EventDispatcher bConn;
        final EventDispatcher bCr;
        final ProtectionZone pa;
        final ProtectionZone pb;
        final PublicServicePoint psp;
        final SharedReceiveQueue srq;
        final int port;

        Shm(OfiProvider p, int port) {
            this.port = port;
            a = p.open(new IaSpec("a", "shm", "", true, "t"), 8);
            b = p.open(new IaSpec("b", "shm", "", true, "t"), 8);
            aDto = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            aConn = a.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
            bDto = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            bConn = b.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
            bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            pa = a.createPz();
            pb = b.createPz();
            psp = b.createPsp(port, bCr, PspFlag.CONSUMER);
            srq = b.createSrq(pb, new SrqAttributes(4, 1, 0));
        }

        /** Connects {@code ea} of a to {@code eb} of b through the PSP; both ESTABLISHED. */
        void connect(Endpoint ea, Endpoint eb) {
            ea.connect(b.query().attributes().address(), port, WAIT, new byte[0], Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, bCr.waitEvent(WAIT, 1));
            cr.request().accept(eb, new byte[0]);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) aConn.waitEvent(WAIT, 1)).number());
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) bConn.waitEvent(WAIT, 1)).number());
        }

        @Override
        public void close() {
            try {
                psp.free();
                a.close();
                b.close();
            } finally {
                arena.close();
            }
        }
    }
}
