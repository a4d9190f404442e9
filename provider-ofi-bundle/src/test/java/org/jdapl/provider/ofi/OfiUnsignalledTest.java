package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrTriplet;
import org.junit.jupiter.api.Test;

/**
 * Requests posted with DAT_COMPLETION_SUPPRESS_FLAG on ofi tcp go unsignalled (no libfabric
 * completion of their own, {@link EpPosts}): they still move their bytes, the request queue does not
 * fill with them (a signalled one every half queue retires them), their successes queue nothing, and a
 * graceful disconnect after them completes (a drain retires the unsignalled tail: DISC_04) with no
 * FLUSHED event.
 */
class OfiUnsignalledTest {
    private static final long WAIT_MICROS = 5_000_000L;
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);

    @Test
    void obj07disc04UnsignalledSendsArriveRetireAndDrainAtGracefulDisconnect() throws Exception {
        try (OfiTcpPair p = new OfiTcpPair()) {
            long cookie = 0;
            for (int round = 0; round < 30; round++) { // 120 sends through a request queue of 8
                for (int i = 0; i < 4; i++) {
                    p.eb.postRecv(List.of(new LmrTriplet(p.lb, 64L * i, 64)), cookie + i, Dat.COMPLETION_DEFAULT);
                }
                for (int i = 0; i < 4; i++) {
                    p.ma.set(ValueLayout.JAVA_LONG, 64L * i, cookie + i);
                    sendRetired(p, i, cookie + i);
                }
                for (int i = 0; i < 4; i++) {
                    DatEvent.DtoCompletion r = assertInstanceOf(DatEvent.DtoCompletion.class,
                            p.bRecv.waitEvent(WAIT_MICROS));
                    assertEquals(cookie + i, r.cookie());
                    assertEquals(DtoStatus.SUCCESS, r.status());
                    assertEquals(DtoOperation.RECEIVE, r.operation());
                    assertEquals(cookie + i, p.mb.get(ValueLayout.JAVA_LONG, 64L * i));
                }
                cookie += 4;
            }
            for (int i = 0; i < 3; i++) {
                p.eb.postRecv(List.of(new LmrTriplet(p.lb, 64L * i, 64)), 1000 + i, Dat.COMPLETION_DEFAULT);
            }
            for (int i = 0; i < 3; i++) {
                p.ea.postSend(List.of(new LmrTriplet(p.la, 64L * i, 64)), 1000 + i, SUPPRESS);
            }
            p.ea.disconnect(CloseFlag.GRACEFUL);
            DatEvent.Connection end = assertInstanceOf(DatEvent.Connection.class, p.aConn.waitEvent(WAIT_MICROS));
            assertEquals(EventNumber.CONNECTION_DISCONNECTED, end.number());
            for (int i = 0; i < 3; i++) {
                DatEvent.DtoCompletion r = assertInstanceOf(DatEvent.DtoCompletion.class, p.bRecv.waitEvent(WAIT_MICROS));
                assertEquals(1000 + i, r.cookie());
                assertEquals(DtoStatus.SUCCESS, r.status());
            }
            Optional<DatEvent> left = p.aReq.dequeue();
            assertTrue(left.isEmpty(), "an unsignalled success queued an event: " + left);
        }
    }

    @Test
    void obj08UnsignalledRdmaWritesPlaceTheirBytesBeforeASignalledOne() throws Exception {
        try (OfiTcpPair p = new OfiTcpPair()) {
            RmrTriplet target = new RmrTriplet(p.lb.rmrContext(), p.lb.query().registeredAddress(), 64 * 4);
            for (int round = 0; round < 25; round++) {
                for (int i = 0; i < 3; i++) {
                    p.ma.set(ValueLayout.JAVA_LONG, 64L * i, round * 10L + i);
                    p.ea.postRdmaWrite(List.of(new LmrTriplet(p.la, 64L * i, 8)), i,
                            new RmrTriplet(target.rmrContext(), target.targetAddress() + 64L * i, 8), SUPPRESS);
                }
                p.ma.set(ValueLayout.JAVA_LONG, 64L * 3, round);
                p.ea.postRdmaWrite(List.of(new LmrTriplet(p.la, 64L * 3, 8)), 100 + round,
                        new RmrTriplet(target.rmrContext(), target.targetAddress() + 64L * 3, 8), Dat.COMPLETION_DEFAULT);
                DatEvent.DtoCompletion w = assertInstanceOf(DatEvent.DtoCompletion.class, p.aReq.waitEvent(WAIT_MICROS));
                assertEquals(100 + round, w.cookie(), "only the signalled write reports");
                assertEquals(DtoStatus.SUCCESS, w.status());
                for (int i = 0; i < 3; i++) {
                    assertEquals(round * 10L + i, p.mb.get(ValueLayout.JAVA_LONG, 64L * i), "write " + i + " of round " + round);
                }
                assertEquals(round, p.mb.get(ValueLayout.JAVA_LONG, 64L * 3));
            }
            p.ea.disconnect(CloseFlag.GRACEFUL);
            assertEquals(EventNumber.CONNECTION_DISCONNECTED,
                    assertInstanceOf(DatEvent.Connection.class, p.aConn.waitEvent(WAIT_MICROS)).number());
            Optional<DatEvent> left = p.aReq.dequeue();
            assertTrue(left.isEmpty(), "an unsignalled success queued an event: " + left);
        }
    }

    /**
     * Posts an unsignalled send, waiting (bounded) while the request queue is full: its slots come
     * back only when a later signalled send's completion retires them, which the IA's progress reads.
     */
    private static void sendRetired(OfiTcpPair p, int i, long cookie) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT_MICROS * 1000;
        while (true) {
            try {
                p.ea.postSend(List.of(new LmrTriplet(p.la, 64L * i, 64)), cookie, SUPPRESS);
                return;
            } catch (DatException e) {
                if (e.type() != DatReturnType.INSUFFICIENT_RESOURCES || System.nanoTime() > deadline) {
                    throw new AssertionError("send " + cookie + ": the unsignalled sends were not retired", e);
                }
                Thread.sleep(1);
            }
        }
    }
}
