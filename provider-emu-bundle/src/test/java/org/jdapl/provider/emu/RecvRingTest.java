package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CompletionFlag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The receive ring of an EP: receives leave in posting order, each once (DISC_02, DISC_08), and a
 * producer that respects the EP's maximum always finds a cleared slot.
 */
@Timeout(60)
class RecvRingTest {

    private static WorkRequest.Recv recv(long cookie) {
        return new WorkRequest.Recv(List.of(), 64 + cookie % 7, cookie,
                cookie % 2 == 0 ? Set.of() : Set.of(CompletionFlag.SUPPRESS));
    }

    /** What the ring keeps beside its head slot is the head receive's: capacity, cookie, flags, segments. */
    private static void assertHeadIs(WorkRequest.Recv r, RecvRing ring) {
        assertEquals(r.capacity, ring.headCapacity());
        assertEquals(r.cookie, ring.cookieAt(ring.headSlot()));
        assertEquals(r.flagBits(), ring.flagsAt(ring.headSlot()));
        assertSame(r.iov, ring.iovAt(ring.headSlot()));
    }

    private static void add(RecvRing ring, WorkRequest.Recv r) {
        ring.lockProducer();
        try {
            ring.add(r);
        } finally {
            ring.unlockProducer();
        }
    }

    @Test
    void DISC_02_receivesLeaveInPostingOrderEachOnce() {
        RecvRing ring = new RecvRing(8);
        assertNull(ring.take());
        assertTrue(ring.isEmpty());
        WorkRequest.Recv[] posted = new WorkRequest.Recv[5];
        for (int i = 0; i < posted.length; i++) {
            posted[i] = recv(i);
            add(ring, posted[i]);
        }
        assertEquals(5, ring.size());
        for (WorkRequest.Recv r : posted) {
            assertSame(r, ring.peek());
            assertHeadIs(r, ring);
            assertSame(r, ring.take());
        }
        assertNull(ring.take());
        assertEquals(-1, ring.headCapacity(), "an empty ring has no head");
        assertEquals(0, ring.size());
    }

    @Test
    void theMaximumIsCountedAgainstWhatIsTaken() {
        RecvRing ring = new RecvRing(4);
        ring.lockProducer();
        try {
            for (int i = 0; i < 4; i++) {
                assertFalse(ring.holds(4));
                ring.add(recv(i));
            }
            assertTrue(ring.holds(4), "four receives are the maximum");
        } finally {
            ring.unlockProducer();
        }
        ring.take();
        ring.lockProducer();
        try {
            assertFalse(ring.holds(4), "a taken receive frees its place");
        } finally {
            ring.unlockProducer();
        }
    }

    /** Many laps of the smallest ring at its maximum: slots are cleared a block at a time, never too late. */
    @Test
    void aProducerWithinTheMaximumNeverFindsTheRingFull() {
        for (int max : new int[] {1, 3, 16, 17}) {
            RecvRing ring = new RecvRing(max);
            long next = 0;
            long expected = 0;
            for (int lap = 0; lap < 10_000; lap++) {
                ring.lockProducer();
                try {
                    while (!ring.holds(max)) {
                        ring.add(recv(next++));
                    }
                } finally {
                    ring.unlockProducer();
                }
                int take = 1 + lap % max;
                for (int k = 0; k < take; k++) {
                    assertEquals(expected, ring.cookieAt(ring.headSlot()), "the words of a reused slot are the new receive's");
                    assertEquals(expected++, ring.take().cookie);
                }
            }
        }
    }

    @Test
    void resizeKeepsTheQueuedReceivesInOrder() {
        RecvRing ring = new RecvRing(2);
        for (int i = 0; i < 2; i++) {
            add(ring, recv(i));
        }
        ring.lockProducer();
        try {
            ring.resize(100);
            for (int i = 2; i < 100; i++) {
                assertFalse(ring.holds(100));
                ring.add(recv(i));
            }
            assertTrue(ring.holds(100));
        } finally {
            ring.unlockProducer();
        }
        for (int i = 0; i < 100; i++) {
            assertEquals(i, ring.cookieAt(ring.headSlot()), "the words move with their slots");
            assertEquals(64 + i % 7, ring.headCapacity());
            assertEquals(i, ring.take().cookie);
        }
        assertNull(ring.take());
    }

    /** One producer thread and one consumer thread: every receive is taken once, in posting order. */
    @Test
    void DISC_02_aConsumerThreadTakesEveryReceiveOnceInOrder() throws Exception {
        int max = 32;
        int count = 50_000;
        RecvRing ring = new RecvRing(max);
        CompletableFuture<Void> producer = CompletableFuture.runAsync(() -> {
            int i = 0;
            while (i < count) {
                ring.lockProducer();
                try {
                    while (i < count && !ring.holds(max)) {
                        ring.add(recv(i++));
                    }
                } finally {
                    ring.unlockProducer();
                }
                Thread.yield();
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (long expected = 0; expected < count; ) {
            long capacity = ring.headCapacity();
            if (capacity < 0) {
                assertTrue(System.nanoTime() < deadline, "the producer stalled");
                Thread.yield();
                continue;
            }
            // the words are visible once the slot is: they were written before its release store
            assertEquals(64 + expected % 7, capacity);
            assertEquals(expected, ring.cookieAt(ring.headSlot()));
            int flags = ring.flagsAt(ring.headSlot());
            WorkRequest.Recv r = ring.take();
            assertEquals(r.flagBits(), flags);
            assertEquals(expected++, r.cookie);
        }
        producer.get(30, TimeUnit.SECONDS);
        assertNull(ring.take());
    }
}
