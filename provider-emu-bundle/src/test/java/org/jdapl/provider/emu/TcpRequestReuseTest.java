package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A tcp EP reuses the work requests of its completed sends, receives and RDMA Writes for its next
 * posts ({@code EpQueues#recycle}): every posted DTO still completes exactly once, with its own cookie,
 * length and data, across an RNR retry whose timer fires after the send completed, and across the
 * flush of a disconnect.
 */
@Timeout(60)
class TcpRequestReuseTest {

    /**
     * OBJ_07: a send refused for want of a receive (RNR) completes once the receive is posted; the sends
     * after it, through the time its retry timer fires and past, complete once each, in order, with
     * their own cookies and data, and a second RNR still waits for its receive.
     */
    @Test
    void OBJ_07_sendsAfterAnRnrRetryCompleteOnceEachWhileItsTimerFires() throws InterruptedException {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            MemorySegment srcMem = f.memory(64);
            MemorySegment dstMem = f.memory(64);
            LocalMemoryRegion src = f.a.lmr(srcMem);
            LocalMemoryRegion dst = f.b.lmr(dstMem);
            eps[0].postSend(iov(src, 0, 64), 1_000, none());
            Thread.sleep(100);
            eps[1].postRecv(iov(dst, 0, 64), 2_000, none());
            expect(f.a.nextDto(), 1_000, DtoOperation.SEND, 64);
            expect(f.b.nextDto(), 2_000, DtoOperation.RECEIVE, 64);
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EmuLimits.RNR_RETRY_MILLIS + 300);
            long i = 0;
            while (System.nanoTime() - end < 0) {
                srcMem.set(ValueLayout.JAVA_LONG, 0, i);
                eps[1].postRecv(iov(dst, 0, 64), 2 * i + 1, none());
                eps[0].postSend(iov(src, 0, 32), 2 * i, none());
                expect(f.b.nextDto(), 2 * i + 1, DtoOperation.RECEIVE, 32);
                expect(f.a.nextDto(), 2 * i, DtoOperation.SEND, 32);
                assertEquals(i, dstMem.get(ValueLayout.JAVA_LONG, 0));
                i++;
                Thread.sleep(5);
            }
            eps[0].postSend(iov(src, 0, 64), 3_000, none());
            Thread.sleep(100);
            assertTrue(f.a.evd.dequeue().isEmpty(), "a send without a receive waits (RNR)");
            eps[1].postRecv(iov(dst, 0, 64), 4_000, none());
            expect(f.a.nextDto(), 3_000, DtoOperation.SEND, 64);
            expect(f.b.nextDto(), 4_000, DtoOperation.RECEIVE, 64);
            assertTrue(f.a.evd.dequeue().isEmpty(), "no completion twice");
            assertTrue(f.b.evd.dequeue().isEmpty(), "no completion twice");
        }
    }

    /**
     * DISC_02, DISC_08: after sends, receives and RDMA Writes completed (their work requests kept for
     * reuse), the ones posted next complete once each: those that cannot go (no receive at the peer) and
     * those behind them FLUSHED when the connection ends, the receives left at the peer FLUSHED too.
     */
    @Test
    void DISC_02_requestsPostedAfterReuseAreFlushedOnceEach() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            LocalMemoryRegion dst = f.b.lmr(f.memory(64));
            RmrTriplet remote = new RmrTriplet(dst.rmrContext(), dst.query().registeredAddress(), 64);
            for (long i = 0; i < 3; i++) {
                eps[1].postRecv(iov(dst, 0, 64), 10 + i, none());
                eps[0].postSend(iov(src, 0, 64), 20 + i, none());
                eps[0].postRdmaWrite(iov(src, 0, 64), 30 + i, remote, none());
                expect(f.b.nextDto(), 10 + i, DtoOperation.RECEIVE, 64);
                expect(f.a.nextDto(), 20 + i, DtoOperation.SEND, 64);
                expect(f.a.nextDto(), 30 + i, DtoOperation.RDMA_WRITE, 64);
            }
            eps[0].postSend(iov(src, 0, 64), 100, none());
            eps[0].postRdmaWrite(iov(src, 0, 64), 101, remote, none());
            eps[0].postSend(iov(src, 0, 64), 102, none());
            eps[0].disconnect(CloseFlag.ABRUPT);
            List<Long> flushed = new ArrayList<>();
            boolean disconnected = false;
            while (!disconnected || flushed.size() < 3) {
                DatEvent e = f.a.next();
                if (e instanceof DatEvent.Connection conn) {
                    assertEquals(EventNumber.CONNECTION_DISCONNECTED, conn.number());
                    disconnected = true;
                } else {
                    DatEvent.DtoCompletion c = (DatEvent.DtoCompletion) e;
                    assertEquals(DtoStatus.FLUSHED, c.status(), () -> "got " + c);
                    flushed.add(c.cookie());
                }
            }
            assertEquals(List.of(100L, 101L, 102L), flushed, "each request completes once, in order");
            assertTrue(f.a.evd.dequeue().isEmpty(), "no completion twice");
            f.b.nextConnectionSkippingDtos(EventNumber.CONNECTION_DISCONNECTED);
        }
    }

    private static void expect(DatEvent.DtoCompletion c, long cookie, DtoOperation op, long length) {
        assertEquals(DtoStatus.SUCCESS, c.status(), () -> "got " + c);
        assertEquals(cookie, c.cookie(), () -> "got " + c);
        assertEquals(op, c.operation(), () -> "got " + c);
        assertEquals(length, c.transferredLength(), () -> "got " + c);
    }
}
