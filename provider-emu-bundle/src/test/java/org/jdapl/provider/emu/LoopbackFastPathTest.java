package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The loopback link's common path without the domain lock: a send moves at once only when nothing
 * precedes it and the peer's receive takes it whole; a receive is queued under its ring's claim; a
 * close waits for a send under way; nothing is lost or completed twice when the path races a
 * disconnect or an RNR wait.
 */
@Timeout(120)
class LoopbackFastPathTest {

    private static WorkRequest.Send send(EmuEp ep, List<LmrTriplet> iov, long cookie) {
        return ep.checks.send(iov, cookie, none(), false, 0);
    }

    /** The link's common send of {@code iov} from {@code ep}, with no completion flags. */
    private static boolean trySend(EmuEp ep, List<LmrTriplet> iov, long cookie) {
        return ep.connection().link().trySend(ep, iov, Segments.total(iov), cookie, 0);
    }

    /** OBJ_07: a request queued before keeps its place; the send goes through the queue after it. */
    @Test
    void OBJ_07_aSendWithARequestQueuedBeforeItIsNotMovedAtOnce() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            EmuEp a = (EmuEp) eps[0];
            EmuEp b = (EmuEp) eps[1];
            List<LmrTriplet> src = iov(f.a.lmr(f.memory(8)), 0, 8);
            eps[1].postRecv(iov(f.b.lmr(f.memory(8)), 0, 8), 5, none());
            WorkRequest.Send queued = send(a, src, 1);
            a.ia().locked(() -> a.queues().addRequest(queued));
            try {
                assertFalse(trySend(a, src, 2));
                assertNotNull(b.queues().nextReceive(), "the receive is still there");
            } finally {
                a.ia().locked(() -> a.requests().clear());
            }
            assertTrue(trySend(a, src, 3));
            assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
            assertEquals(5, f.b.nextDto().cookie());
        }
    }

    /** OBJ_07: what the responder would refuse (too long for the receive) goes through the RC rules. */
    @Test
    void OBJ_07_aSendTheReceiveCannotTakeGoesThroughTheRules() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            EmuEp a = (EmuEp) eps[0];
            EmuEp b = (EmuEp) eps[1];
            eps[1].postRecv(iov(f.b.lmr(f.memory(8)), 0, 4), 5, none());
            assertFalse(trySend(a, iov(f.a.lmr(f.memory(8)), 0, 8), 1));
            assertNotNull(b.queues().nextReceive(), "nothing was taken");
            eps[0].postSend(iov(f.a.lmr(f.memory(8)), 0, 8), 2, none());
            assertEquals(DtoStatus.REMOTE_RESPONDER, f.a.nextDto().status());
        }
    }

    /** DISC_08, DISC_16: closing the link waits for a send under way; none moves after. */
    @Test
    void DISC_16_aDisconnectWaitsForASendUnderWayAndNoSendMovesAfter() throws Exception {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            EmuEp a = (EmuEp) eps[0];
            SendLock lock = a.queues().sendLock();
            lock.lock();
            CompletableFuture<Void> disconnect;
            try {
                disconnect = CompletableFuture.runAsync(() -> eps[1].disconnect(CloseFlag.ABRUPT));
                Thread.sleep(100);
                assertFalse(disconnect.isDone(), "the close waits for the sender's lock");
                assertTrue(a.connection().link().isOpen());
            } finally {
                lock.unlock();
            }
            disconnect.get(10, TimeUnit.SECONDS);
            assertFalse(a.connection().link().isOpen());
            eps[1].postRecv(iov(f.b.lmr(f.memory(8)), 0, 8), 5, none());
            assertFalse(trySend(a, iov(f.a.lmr(f.memory(8)), 0, 8), 1));
        }
    }

    /**
     * DISC_02, DISC_08: receives posted without the domain lock while the peer sends and the EP
     * disconnects: every receive completes exactly once, taken or flushed, and every send too.
     */
    @RepeatedTest(20)
    void DISC_02_receivesRacingADisconnectCompleteExactlyOnce() throws Exception {
        try (Fixture f = new Fixture(100_000)) {
            Endpoint[] eps = f.connect();
            List<LmrTriplet> sink = iov(f.b.lmr(f.memory(64)), 0, 64);
            List<LmrTriplet> src = iov(f.a.lmr(f.memory(64)), 0, 64);
            int n = 2_000;
            CompletableFuture<Integer> receiver = CompletableFuture.supplyAsync(() -> {
                for (int i = 0; i < n; ) {
                    try {
                        eps[1].postRecv(sink, i, none());
                        i++;
                    } catch (org.jdapl.dat.DatException e) {
                        assertEquals(org.jdapl.dat.DatReturnType.INSUFFICIENT_RESOURCES, e.type());
                        Thread.yield(); // the EP holds its maximum of receives: the sender takes some
                    }
                }
                return n;
            });
            CompletableFuture<Integer> sender = CompletableFuture.supplyAsync(() -> {
                int sent = 0;
                try {
                    for (int i = 0; i < n; i++) {
                        eps[0].postSend(src, i, none());
                        sent++;
                    }
                } catch (org.jdapl.dat.DatException e) {
                    // INVALID_STATE once the EP is disconnected: that send was not posted
                }
                return sent;
            });
            Thread.sleep(1);
            eps[1].disconnect(CloseFlag.ABRUPT);
            int posted = receiver.get(30, TimeUnit.SECONDS);
            int sent = sender.get(30, TimeUnit.SECONDS);
            assertCompletesOnce(f.b, posted, EventNumber.CONNECTION_DISCONNECTED);
            assertCompletesOnce(f.a, sent, EventNumber.CONNECTION_DISCONNECTED);
        }
    }

    /** Every cookie 0..count-1 completes exactly once on {@code side}'s EVD; the connection event comes too. */
    private static void assertCompletesOnce(Fixture.Side side, int count, EventNumber connection) {
        Map<Long, DtoStatus> seen = new HashMap<>();
        boolean disconnected = false;
        boolean failed = false;
        while (seen.size() < count || !disconnected) {
            DatEvent e = side.next();
            if (e instanceof DatEvent.Connection c) {
                assertEquals(connection, c.number());
                assertFalse(disconnected, "one DISCONNECTED event");
                disconnected = true;
            } else {
                DatEvent.DtoCompletion d = (DatEvent.DtoCompletion) e;
                assertSame(null, seen.put(d.cookie(), d.status()), () -> "cookie " + d.cookie() + " completed twice");
                assertTrue(d.cookie() < count);
                if (d.status() == DtoStatus.SUCCESS) {
                    assertFalse(failed, "no success after a failure in one direction (DISC_03)");
                    assertFalse(disconnected, "successful completions precede DISCONNECTED (DISC_09)");
                } else {
                    assertEquals(DtoStatus.FLUSHED, d.status());
                    failed = true;
                }
            }
        }
        assertTrue(side.evd.dequeue().isEmpty(), "nothing more");
    }

    /**
     * A send waiting for a receive (RNR) and a receive queued without the domain lock at the same time:
     * one of them sees the other, so the send proceeds at once rather than at the end of its retry window.
     */
    @Test
    void aSendWaitingForAReceiveIsKickedByAReceiveQueuedAtTheSameTime() throws Exception {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            List<LmrTriplet> sink = iov(f.b.lmr(f.memory(8)), 0, 8);
            List<LmrTriplet> src = iov(f.a.lmr(f.memory(8)), 0, 8);
            for (int i = 0; i < 300; i++) {
                long cookie = i;
                CompletableFuture<Void> recv = CompletableFuture.runAsync(() -> eps[1].postRecv(sink, cookie, none()));
                eps[0].postSend(src, cookie, none());
                recv.get(10, TimeUnit.SECONDS);
                DatEvent sent = f.a.evd.waitEvent(500_000);
                assertEquals(DtoStatus.SUCCESS, ((DatEvent.DtoCompletion) sent).status(), "round " + i);
                DatEvent got = f.b.evd.waitEvent(500_000);
                assertEquals(cookie, ((DatEvent.DtoCompletion) got).cookie());
            }
        }
    }
}
