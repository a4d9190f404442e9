package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
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
 * A one-way stream on ofi tcp, where the receiver never sends and posts its receives late, a few at a
 * time: a send waits at the sender for a credit, which comes only with the receiver's count written
 * after each posted receive ({@link MsgCredits}). No send may stall: each receive completes within
 * the bound, in order, and each send completes SUCCESS (DISC_02: a send leaves only for a posted
 * receive, and then it leaves).
 */
class OfiCreditStreamTest {
    private static final long WAIT_MICROS = 5_000_000L;
    private static final int ROUNDS = 40;

    @Test
    void disc02OneWayStreamWithLateReceivesNeverStallsReceiverWaiting() throws Exception {
        stream(false);
    }

    @Test
    void disc02OneWayStreamWithLateReceivesNeverStallsReceiverPolling() throws Exception {
        stream(true);
    }

    private static void stream(boolean polling) throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (InterfaceAdapter a = p.open(new IaSpec("a", "tcp lo", "", true, "t"), 8);
             InterfaceAdapter b = p.open(new IaSpec("b", "tcp lo", "", true, "t"), 8);
             Arena arena = Arena.ofShared()) {
            EventDispatcher aReq = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher aRecv = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher aConn = a.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bReq = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher bRecv = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher bConn = b.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            ProtectionZone pa = a.createPz();
            ProtectionZone pb = b.createPz();
            PublicServicePoint psp = b.createPspAny(bCr, PspFlag.CONSUMER);
            EpAttributes depths = EpAttributes.defaults().withQueueDepths(8, 8);
            Endpoint ea = a.createEp(pa, aRecv, aReq, aConn, depths);
            Endpoint eb = b.createEp(pb, bRecv, bReq, bConn, depths);
            MemorySegment ma = arena.allocate(64 * 4);
            MemorySegment mb = arena.allocate(64 * 4);
            LocalMemoryRegion la = a.createLmr(pa, ma, EnumSet.allOf(MemPriv.class), VaType.VA);
            LocalMemoryRegion lb = b.createLmr(pb, mb, EnumSet.allOf(MemPriv.class), VaType.VA);
            ea.connect(b.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0]);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class,
                    bCr.waitEvent(WAIT_MICROS));
            cr.request().accept(eb, new byte[0]);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) aConn.waitEvent(WAIT_MICROS)).number());
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) bConn.waitEvent(WAIT_MICROS)).number());

            long cookie = 0;
            for (int round = 0; round < ROUNDS; round++) {
                int k = 1 + round % 3; // fewer than the receive queue (8) holds
                for (int i = 0; i < k; i++) {
                    eb.postRecv(List.of(new LmrTriplet(lb, 64L * i, 64)), cookie + i, Dat.COMPLETION_DEFAULT);
                }
                Thread.sleep(round % 4 == 0 ? 20 : 0); // the receiver's count is settled before the sends stall
                for (int i = 0; i < k; i++) {
                    ma.set(ValueLayout.JAVA_LONG, 64L * i, cookie + i);
                    ea.postSend(List.of(new LmrTriplet(la, 64L * i, 64)), cookie + i, Dat.COMPLETION_DEFAULT);
                }
                for (int i = 0; i < k; i++) {
                    DatEvent.DtoCompletion r = assertInstanceOf(DatEvent.DtoCompletion.class,
                            next(bRecv, polling, "receive " + (cookie + i) + " of round " + round));
                    assertEquals(cookie + i, r.cookie());
                    assertEquals(DtoStatus.SUCCESS, r.status());
                    assertEquals(DtoOperation.RECEIVE, r.operation());
                    assertEquals(cookie + i, mb.get(ValueLayout.JAVA_LONG, 64L * i));
                }
                for (int i = 0; i < k; i++) {
                    DatEvent.DtoCompletion s = assertInstanceOf(DatEvent.DtoCompletion.class,
                            next(aReq, false, "send " + (cookie + i) + " of round " + round));
                    assertEquals(cookie + i, s.cookie());
                    assertEquals(DtoStatus.SUCCESS, s.status());
                }
                cookie += k;
            }
        }
    }

    /** The next event of {@code evd}: waited for, or polled for by the consumer; bounded. */
    private static DatEvent next(EventDispatcher evd, boolean polling, String what) {
        if (!polling) {
            try {
                return evd.waitEvent(WAIT_MICROS);
            } catch (DatException e) {
                throw new AssertionError(what + " did not complete within 5 s: the stream stalled (" + e + ")");
            }
        }
        long deadline = System.nanoTime() + WAIT_MICROS * 1000;
        while (System.nanoTime() < deadline) {
            Optional<DatEvent> e = evd.dequeue();
            if (e.isPresent()) {
                return e.get();
            }
            Thread.onSpinWait();
        }
        throw new AssertionError(what + " did not complete within 5 s: the stream stalled");
    }
}
