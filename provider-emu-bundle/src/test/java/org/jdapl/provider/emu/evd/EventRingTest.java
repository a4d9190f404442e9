package org.jdapl.provider.emu.evd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
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

    private static final Endpoint EP = proxy(Endpoint.class);
    private static final EventDispatcher EVD = proxy(EventDispatcher.class);

    private static <T> T proxy(Class<T> type) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (p, m, a) -> {
            throw new UnsupportedOperationException(m.getName());
        }));
    }

    /** Publishes DTO completion {@code n} as values ({@link EventRing#appendDto}), every field derived from n. */
    private static boolean publishDto(EventRing ring, long n) {
        ring.claimProducer();
        try {
            return ring.appendDto(EP, n, STATUS[(int) (n % STATUS.length)], 7 * n, OPERATION[(int) (n % OPERATION.length)],
                    (int) (11 * n));
        } finally {
            ring.releaseProducer();
        }
    }

    private static final DtoStatus[] STATUS = DtoStatus.values();
    private static final DtoOperation[] OPERATION = DtoOperation.values();

    /** Checks that {@code e} is DTO completion {@code n} of {@link #publishDto}, of the ring's EVD. */
    private static void assertDto(long n, DatEvent e) {
        DatEvent.DtoCompletion d = assertInstanceOf(DatEvent.DtoCompletion.class, e, () -> "event " + n);
        assertEquals(new DatEvent.DtoCompletion(EVD, EP, n, STATUS[(int) (n % STATUS.length)], 7 * n,
                OPERATION[(int) (n % OPERATION.length)], (int) (11 * n)), d);
    }

    private static long number(DatEvent e) {
        return e instanceof DatEvent.Software s ? (Long) s.pointer() : ((DatEvent.DtoCompletion) e).cookie();
    }

    private static DatEvent take(EventRing ring) {
        return ring.poll();
    }

    @Test
    void obj04EventsBeyondTheLengthAndTheRingAreKeptInOrder() {
        EventRing ring = new EventRing(4, EVD);
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
        EventRing ring = new EventRing(2, EVD);
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
        EventRing ring = new EventRing(1, EVD);
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

    /**
     * The ring forgets a taken event at once: no taken event (nor the EP of a DTO completion) stays
     * reachable from its slots, before and after the ring grew.
     */
    @Test
    void aTakenEventIsNotKeptReachable() {
        EventRing ring = new EventRing(64, EVD);
        int length = ring.slots.length();
        for (long i = 0; i < 10 * length; i++) {
            if (i % 2 == 0) {
                ring.publish(event(i));
            } else {
                publishDto(ring, i);
            }
            take(ring);
            assertEquals(0, kept(ring), "taken events kept after event " + i);
        }
        for (long i = 0; i < 3 * length; i++) {
            publishDto(ring, i);
        }
        assertTrue(ring.slots.length() > length, "the ring grew");
        for (long i = 0; i < 3 * length; i++) {
            assertDto(i, take(ring));
            assertEquals(3 * length - i - 1, kept(ring), "after taking event " + i + " of a grown ring");
        }
        assertTrue(ring.isEmpty());
    }

    private static long kept(EventRing ring) {
        return java.util.Arrays.stream(ring.slots.events).filter(java.util.Objects::nonNull).count();
    }

    /**
     * DTO completions kept as values and events kept as objects, interleaved beyond the ring's first
     * size (it grows twice): each comes out once, in order, a DTO completion with every field it went
     * in with and the ring's EVD; the crossing of the length counts both kinds (OBJ_04).
     */
    @Test
    void obj04DtoCompletionsKeptAsValuesComeOutWholeInOrderAcrossGrowth() {
        EventRing ring = new EventRing(100, EVD);
        int crossings = 0;
        for (long i = 0; i < 300; i++) {
            if (i % 3 == 0 ? ring.publish(event(i)) : publishDto(ring, i)) {
                crossings++;
            }
        }
        assertEquals(1, crossings);
        for (long i = 0; i < 300; i++) {
            DatEvent e = take(ring);
            if (i % 3 == 0) {
                assertEquals(i, number(e));
            } else {
                assertDto(i, e);
            }
        }
        assertNull(take(ring));
    }

    @Test
    void obj03ThresholdCountsDtoCompletionsKeptAsValuesToo() {
        EventRing ring = new EventRing(8, EVD);
        publishDto(ring, 0);
        ring.publish(dto(1));
        publishDto(ring, 2);
        assertTrue(ring.ready(3));
        assertFalse(ring.ready(4), "three DTO completions do not serve a threshold of four");
        ring.publish(event(3));
        assertTrue(ring.ready(8), "a software event is not held back by the threshold");
    }

    @Test
    void obj03ThresholdCountsDtoCompletionsAndAnyOtherEventServesAWaiter() {
        EventRing ring = new EventRing(8, EVD);
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
     * and each consumer sees the events in publication order; every other one is a DTO completion kept
     * as values, which comes out whole.
     */
    @Test
    void aProducerRacingTwoConsumersLosesAndDuplicatesNothing() throws Exception {
        EventRing ring = new EventRing(8, EVD);
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
                        long n = number(e);
                        if (n % 2 == 1) {
                            assertDto(n, e);
                        }
                        seen.add(n);
                    }
                }
                throw new AssertionError("consumer timed out");
            }, r -> Thread.ofPlatform().start(r)));
        }
        Thread producer = Thread.ofPlatform().start(() -> {
            for (long i = 0; i < total; i++) {
                if (i % 2 == 0) {
                    ring.publish(event(i));
                } else {
                    publishDto(ring, i);
                }
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
