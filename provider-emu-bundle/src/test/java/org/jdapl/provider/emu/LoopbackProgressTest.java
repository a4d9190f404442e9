package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.LocalIov;
import org.jdapl.dat.LocalMemoryRegion;
import org.junit.jupiter.api.Test;

/**
 * The loopback fabric's progress rules (the provider README's "Progress"): the sender's post moves
 * a send and produces both completions, so a sender completes whether or not its peer ever polls,
 * and the receiver's dequeue or wait only takes a receive completion that is already there; a send
 * that found no receive moves in the receiver's post of one.
 */
class LoopbackProgressTest {
    private static final int N = 32;

    @Test
    void OBJ_07_aSenderWhosePeerNeverPollsCompletesEverySend() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment src = f.memory(64);
            MemorySegment dst = f.memory(64L * N);
            LocalIov from = LocalIov.of(f.a.lmr(src));
            LocalMemoryRegion into = f.b.lmr(dst);
            for (int i = 0; i < N; i++) {
                eps[1].postRecv(iov(into, 64L * i, 64), 100 + i, none());
            }
            EventSlot slot = new EventSlot();
            for (int i = 0; i < N; i++) {
                src.set(ValueLayout.JAVA_INT, 0, i);
                eps[0].postSend(from, i, none());
                // B never polls: the post alone completed A's send.
                assertTrue(f.a.evd.dequeue(slot), "send " + i + " completed although its peer does not poll");
                assertEquals(DtoStatus.SUCCESS, slot.status());
                assertEquals(DtoOperation.SEND, slot.operation());
                assertEquals(i, slot.cookie());
            }
            assertEquals(N, f.b.evd.count(), "every receive completion is queued before the receiver polls");
            for (int i = 0; i < N; i++) {
                assertTrue(f.b.evd.dequeue(slot));
                assertEquals(100 + i, slot.cookie(), "receives complete in posting order");
                assertEquals(64, slot.transferredLength());
                assertEquals(i, dst.get(ValueLayout.JAVA_INT, 64L * i));
            }
            assertFalse(f.b.evd.dequeue(slot));
        }
    }

    @Test
    void OBJ_07_aSendWithoutAReceiveMovesInTheReceiversPost() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment src = f.memory(8);
            MemorySegment dst = f.memory(8);
            src.set(ValueLayout.JAVA_LONG, 0, 77);
            eps[0].postSend(iov(f.a.lmr(src), 0, 8), 1, none());
            EventSlot slot = new EventSlot();
            assertFalse(f.a.evd.dequeue(slot), "the send waits for a receive");
            eps[1].postRecv(iov(f.b.lmr(dst), 0, 8), 2, none());
            // The receiver's post moved the send: both completions are there, no thread polled for them.
            assertEquals(1, f.b.evd.count());
            assertEquals(77, dst.get(ValueLayout.JAVA_LONG, 0));
            assertTrue(f.a.evd.dequeue(slot));
            assertEquals(1, slot.cookie());
            assertTrue(f.b.evd.dequeue(slot));
            assertEquals(2, slot.cookie());
        }
    }
}
