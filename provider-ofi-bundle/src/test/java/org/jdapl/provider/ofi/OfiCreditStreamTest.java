package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.LmrTriplet;
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
        try (OfiTcpPair p = new OfiTcpPair()) {
            long cookie = 0;
            for (int round = 0; round < ROUNDS; round++) {
                int k = 1 + round % 3; // fewer than the receive queue (8) holds
                for (int i = 0; i < k; i++) {
                    p.eb.postRecv(List.of(new LmrTriplet(p.lb, 64L * i, 64)), cookie + i, Dat.COMPLETION_DEFAULT);
                }
                Thread.sleep(round % 4 == 0 ? 20 : 0); // the receiver's count is settled before the sends stall
                for (int i = 0; i < k; i++) {
                    p.ma.set(ValueLayout.JAVA_LONG, 64L * i, cookie + i);
                    p.ea.postSend(List.of(new LmrTriplet(p.la, 64L * i, 64)), cookie + i, Dat.COMPLETION_DEFAULT);
                }
                for (int i = 0; i < k; i++) {
                    DatEvent.DtoCompletion r = assertInstanceOf(DatEvent.DtoCompletion.class,
                            next(p.bRecv, polling, "receive " + (cookie + i) + " of round " + round));
                    assertEquals(cookie + i, r.cookie());
                    assertEquals(DtoStatus.SUCCESS, r.status());
                    assertEquals(DtoOperation.RECEIVE, r.operation());
                    assertEquals(cookie + i, p.mb.get(ValueLayout.JAVA_LONG, 64L * i));
                }
                for (int i = 0; i < k; i++) {
                    DatEvent.DtoCompletion s = assertInstanceOf(DatEvent.DtoCompletion.class,
                            next(p.aReq, false, "send " + (cookie + i) + " of round " + round));
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
