package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The event loop's timers (CONN_07's connect time-out runs on them): a due task runs on the event
 * thread, a cancelled one never runs and leaves the queue at once, not at its deadline.
 */
class OfaEventLoopTest {
    /** A handler that ignores every descriptor (tests override what they watch). */
    static class NoEvents implements OfaEventLoop.Handler {
        @Override
        public void completions() {
        }

        @Override
        public void asyncEvents() {
        }

        @Override
        public void cmEvents() {
        }
    }

    private static final OfaEventLoop.Handler NONE = new NoEvents();

    @Test
    void CONN_07_aCancelledTimerLeavesTheQueueAtOnceAndNeverRuns() throws Exception {
        OfaEventLoop loop = new OfaEventLoop("test", -1, -1, -1, NONE);
        loop.start();
        try {
            AtomicBoolean cancelledRan = new AtomicBoolean();
            OfaEventLoop.Timer far = loop.schedule(TimeUnit.SECONDS.toNanos(60), () -> cancelledRan.set(true));
            OfaEventLoop.Timer soon = loop.schedule(TimeUnit.MILLISECONDS.toNanos(20), () -> cancelledRan.set(true));
            assertEquals(2, loop.pendingTimers());
            far.cancel();
            soon.cancel();
            assertEquals(0, loop.pendingTimers(), "cancelled timers are not held until their deadlines");

            CountDownLatch ran = new CountDownLatch(1);
            loop.schedule(TimeUnit.MILLISECONDS.toNanos(50), ran::countDown);
            assertTrue(ran.await(5, TimeUnit.SECONDS), "a due timer runs");
            assertFalse(cancelledRan.get(), "a cancelled timer never runs");
            assertEquals(0, loop.pendingTimers());
        } finally {
            loop.stop();
        }
    }
}
