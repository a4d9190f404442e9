package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lock-free event ring of an EVD: order, exactly-once delivery, the overflow rule (OBJ_04), the
 * threshold rule of a waiter, and a producer racing consumers.
 */
@Timeout(60)
class EventRingTest {
    private static DatEvent event(long n) {
        return new DatEvent.Software(null, n);
    }

    private static DatEvent dto(long n) {
        return new DatEvent.DtoCompletion(null, null, n, DtoStatus.SUCCESS, 0, DtoOperation.SEND, 0);
    }

    private static long number(DatEvent e) {
        return e instanceof DatEvent.Software s ? (Long) s.pointer() : ((DatEvent.DtoCompletion) e).cookie();
    }

    private static DatEvent take(EventRing ring) {
        return ring.poll();
    }

    @Test
    void obj04EventsBeyondTheLengthAndTheRingAreKeptInOrder() {
        EventRing ring = new EventRing(4);
        int crossings = 0;
        for (long i = 0; i < 1000; i++) {
            if (ring.publish(event(i))) {
                crossings++;
            }
        }
        assertEquals(1, crossings, "the crossing of qlen is reported once");
        assertEquals(1000, ring.size());
        for (long i = 0; i < 1000; i++) {
            assertFalse(ring.isEmpty());
            assertEquals(i, number(take(ring)));
        }
        assertTrue(ring.isEmpty());
        assertNull(take(ring));
        assertEquals(0, ring.size());
    }

    @Test
    void obj04TheOverflowIsReportedAgainOnlyAfterTheQueueWentBackToItsLength() {
        EventRing ring = new EventRing(2);
        assertFalse(ring.publish(event(0)));
        assertFalse(ring.publish(event(1)));
        assertTrue(ring.publish(event(2)), "3 events in a queue of 2");
        assertFalse(ring.publish(event(3)), "still over: not reported twice");
        take(ring);
        assertFalse(ring.publish(event(4)), "never back to 2 events");
        take(ring);
        take(ring);
        assertTrue(ring.publish(event(5)), "back to 2, then over again");
        take(ring);
        take(ring);
        ring.resize(5);
        for (long i = 6; i < 10; i++) {
            assertFalse(ring.publish(event(i)), "resized to 5: " + ring.size() + " queued");
        }
        assertTrue(ring.publish(event(10)), "6 events in a queue of 5");
        for (long i = 5; i < 11; i++) {
            assertEquals(i, number(take(ring)));
        }
        assertNull(take(ring));
    }

    @Test
    void aSlotTakenLapsAgoIsNeverTakenAgain() {
        EventRing ring = new EventRing(1);
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 20_000; round++) {
            int burst = 1 + round % (3 * EventRing.MIN_SLOTS / 2);
            for (int k = 0; k < burst; k++) {
                ring.publish(event(next++));
            }
            for (int k = 0; k < burst; k++) {
                assertEquals(expected++, number(take(ring)));
            }
            assertTrue(ring.isEmpty(), "round " + round);
            assertNull(take(ring), "round " + round);
        }
    }

    /** The ring forgets taken events: at most half a ring of them stays reachable from its slots. */
    @Test
    void aTakenEventIsKeptReachableAtMostHalfARing() {
        EventRing ring = new EventRing(64);
        int length = ring.slots.length();
        for (long i = 0; i < 10 * length; i++) {
            ring.publish(event(i));
            assertEquals(i, number(take(ring)));
            long kept = java.util.Arrays.stream(ring.slots.events).filter(java.util.Objects::nonNull).count();
            assertTrue(kept <= length / 2 + 1, kept + " taken events kept after event " + i);
        }
        assertTrue(ring.isEmpty());
    }

    @Test
    void obj03ThresholdCountsDtoCompletionsAndAnyOtherEventServesAWaiter() {
        EventRing ring = new EventRing(8);
        assertFalse(ring.ready(1));
        ring.publish(dto(0));
        ring.publish(dto(1));
        assertTrue(ring.ready(2));
        assertFalse(ring.ready(3));
        ring.publish(event(2));
        assertTrue(ring.ready(8), "a software event is not held back by the threshold");
        take(ring);
        take(ring);
        take(ring);
        assertFalse(ring.ready(1));
    }

    /**
     * One producer (as under the domain lock) against two consumers racing for each head,
     * with a short queue so that the ring grows while they take: every event is taken exactly once,
     * and each consumer sees the events in publication order.
     */
    @Test
    void aProducerRacingTwoConsumersLosesAndDuplicatesNothing() throws Exception {
        EventRing ring = new EventRing(8);
        int total = 400_000;
        List<CompletableFuture<List<Long>>> consumers = new ArrayList<>();
        CompletableFuture<Void> produced = new CompletableFuture<>();
        for (int c = 0; c < 2; c++) {
            consumers.add(CompletableFuture.supplyAsync(() -> {
                List<Long> seen = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
                while (System.nanoTime() < deadline) {
                    if (ring.isEmpty()) {
                        if (produced.isDone() && ring.size() == 0) {
                            return seen;
                        }
                        Thread.onSpinWait();
                        continue;
                    }
                    DatEvent e = take(ring);
                    if (e != null) {
                        seen.add(number(e));
                    }
                }
                throw new AssertionError("consumer timed out");
            }, r -> Thread.ofPlatform().start(r)));
        }
        Thread producer = Thread.ofPlatform().start(() -> {
            for (long i = 0; i < total; i++) {
                ring.publish(event(i));
                if (i % 1000 == 0) {
                    Thread.yield();
                }
            }
            produced.complete(null);
        });
        producer.join(TimeUnit.SECONDS.toMillis(40));
        boolean[] taken = new boolean[total];
        int count = 0;
        for (CompletableFuture<List<Long>> c : consumers) {
            long last = -1;
            for (long n : c.get(45, TimeUnit.SECONDS)) {
                assertTrue(n > last, "a consumer saw " + n + " after " + last);
                last = n;
                assertFalse(taken[(int) n], "event " + n + " taken twice");
                taken[(int) n] = true;
                count++;
            }
        }
        assertEquals(total, count, "events taken");
    }
}
