package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The EP lock: reentrant, exclusive, and given back only by its holder. */
class EpLockTest {
    @Test
    void isReentrantAndFreedByTheLastUnlock() throws Exception {
        EpLock lock = new EpLock();
        lock.lock();
        lock.lock();
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
        assertTrue(lock.isHeldByCurrentThread(), "one hold is left");
        CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
            lock.lock();
            lock.unlock();
            return true;
        });
        lock.unlock();
        assertFalse(lock.isHeldByCurrentThread());
        assertTrue(other.get(10, TimeUnit.SECONDS), "another thread takes it once it is free");
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItFails() throws Exception {
        EpLock lock = new EpLock();
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        lock.lock();
        try {
            CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
                try {
                    lock.unlock();
                    return null;
                } catch (IllegalMonitorStateException e) {
                    return e;
                }
            });
            assertTrue(other.get(10, TimeUnit.SECONDS) instanceof IllegalMonitorStateException);
            assertTrue(lock.isHeldByCurrentThread(), "the holder still holds it");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void excludesOtherThreadsAndLosesNoUpdate() throws Exception {
        EpLock lock = new EpLock();
        int threads = 4;
        int rounds = 20_000;
        long[] counter = new long[1];
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < rounds; i++) {
                    lock.lock();
                    try {
                        long v = counter[0];
                        if ((i & 255) == 0) {
                            Thread.yield(); // hold it across a reschedule now and then
                        }
                        counter[0] = v + 1;
                    } finally {
                        lock.unlock();
                    }
                }
            });
            workers.add(w);
        }
        start.countDown();
        for (Thread w : workers) {
            w.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(w.isAlive(), "a worker is stuck");
        }
        lock.lock();
        try {
            assertEquals((long) threads * rounds, counter[0]);
        } finally {
            lock.unlock();
        }
    }
}
