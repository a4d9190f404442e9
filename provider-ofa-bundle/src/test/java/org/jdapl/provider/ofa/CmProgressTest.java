package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.provider.ofa.verbs.Libc;
import org.junit.jupiter.api.Test;

/**
 * Who takes the rdma_cm events (CONN_03's ESTABLISHED reaches a busy-polling consumer through them):
 * a polling consumer leases the channel and takes events itself, the event thread leaves the channel
 * alone while the lease holds and takes it back when it ends, one thread takes an event at a time,
 * and nobody takes one after the IA closed the channel.
 */
class CmProgressTest {

    @Test
    void CONN_03_aPollingConsumerTakesTheNextEventAndHoldsALease() {
        AtomicInteger ready = new AtomicInteger(2);
        CmProgress progress = new CmProgress(() -> ready.getAndUpdate(n -> Math.max(0, n - 1)) > 0);
        assertTrue(progress.leaseLeft() <= 0, "no lease before a consumer polls");
        assertTrue(progress.poll(), "the first ready event");
        assertTrue(progress.leaseLeft() > 0, "a poll leases the channel");
        assertTrue(progress.leaseLeft() <= CmProgress.LEASE_NANOS);
        assertTrue(progress.poll(), "the second ready event: after a take the next look is at once");
        assertFalse(progress.poll(), "nothing ready");
        assertEquals(0, ready.get());
    }

    @Test
    void CONN_03_afterAnEmptyLookTheNextWaitsAPauseThatGrowsAndATakeEndsIt() {
        AtomicLong clock = new AtomicLong(1_000_000);
        AtomicInteger looks = new AtomicInteger();
        AtomicInteger ready = new AtomicInteger();
        CmProgress progress = new CmProgress(() -> {
            looks.incrementAndGet();
            return ready.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
        }, clock::get);
        assertFalse(progress.poll());
        assertEquals(1, looks.get());
        clock.addAndGet(CmProgress.BACKOFF_MIN_NANOS - 1);
        assertFalse(progress.poll());
        assertEquals(1, looks.get(), "no look within the pause after an empty one");
        clock.addAndGet(1);
        assertFalse(progress.poll());
        assertEquals(2, looks.get(), "a look once the pause is over");
        // the pause doubles while the channel stays empty, up to the longest
        clock.addAndGet(2 * CmProgress.BACKOFF_MIN_NANOS - 1);
        progress.poll();
        assertEquals(2, looks.get(), "the second pause is twice the first");
        for (int i = 0; i < 20; i++) {
            clock.addAndGet(CmProgress.BACKOFF_MAX_NANOS);
            progress.poll();
        }
        int looked = looks.get();
        clock.addAndGet(CmProgress.BACKOFF_MAX_NANOS - 1);
        progress.poll();
        assertEquals(looked, looks.get(), "the pause stops growing at the longest");
        ready.set(2);
        clock.addAndGet(1);
        assertTrue(progress.poll(), "an event is taken at the next look");
        assertTrue(progress.poll(), "after a take the next look is at once");
        assertEquals(looked + 2, looks.get());
    }

    @Test
    void CONN_03_aConsumerDoesNotTakeWhileAnotherThreadIsTaking() throws Exception {
        CountDownLatch inTake = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger taken = new AtomicInteger();
        CmProgress progress = new CmProgress(() -> {
            taken.incrementAndGet();
            if (Thread.currentThread().getName().equals("event-thread")) {
                inTake.countDown();
                try {
                    release.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return true;
        });
        Thread eventThread = new Thread(progress::take, "event-thread");
        eventThread.start();
        try {
            assertTrue(inTake.await(5, TimeUnit.SECONDS));
            assertFalse(progress.poll(), "the event thread is taking an event: the consumer takes none");
            assertEquals(1, taken.get(), "one event at a time");
        } finally {
            release.countDown();
            eventThread.join(5_000);
        }
        assertTrue(progress.poll(), "once the event thread is done, the consumer takes the next");
        assertEquals(2, taken.get());
    }

    @Test
    void CONN_03_noEventIsTakenAfterTheChannelClosed() {
        AtomicInteger taken = new AtomicInteger();
        CmProgress progress = new CmProgress(() -> {
            taken.incrementAndGet();
            return true;
        });
        progress.close();
        assertFalse(progress.poll());
        progress.take();
        assertEquals(0, taken.get());
    }

    /**
     * The event loop leaves a readable rdma_cm channel alone while a consumer's lease holds, and
     * hands it to the handler once the lease has ended (an eventfd stands in for the channel).
     */
    @Test
    void CONN_03_theEventLoopLeavesTheChannelToALeaseholderAndTakesItBackAfterwards() throws Exception {
        int channel = Libc.eventfd();
        long leaseEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        AtomicInteger inLease = new AtomicInteger();
        CountDownLatch taken = new CountDownLatch(1);
        OfaEventLoop.Handler handler = new OfaEventLoopTest.NoEvents() {
            @Override
            public void cmEvents() {
                if (leaseEnd - System.nanoTime() > 0) {
                    inLease.incrementAndGet();
                }
                Libc.drain(channel);
                taken.countDown();
            }

            @Override
            public long cmLeaseNanos() {
                return leaseEnd - System.nanoTime();
            }
        };
        OfaEventLoop loop = new OfaEventLoop("test", -1, -1, channel, handler);
        loop.start();
        try {
            Libc.signal(channel);
            assertTrue(taken.await(5, TimeUnit.SECONDS), "the loop takes the channel back when the lease ends");
            assertEquals(0, inLease.get(), "nothing was taken by the event thread while the lease held");
            assertTrue(leaseEnd - System.nanoTime() <= 0);
        } finally {
            loop.stop();
            Libc.close(channel);
        }
    }
}
