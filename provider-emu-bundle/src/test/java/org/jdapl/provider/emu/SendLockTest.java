package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lock of an EP's sending side: mutual exclusion, reentrancy, release by its holder only. */
@Timeout(60)
class SendLockTest {
    private long counter;

    @Test
    void threadsExcludeEachOther() throws Exception {
        SendLock lock = new SendLock();
        int n = 200_000;
        Runnable add = () -> {
            for (int i = 0; i < n; i++) {
                lock.lock();
                try {
                    counter++;
                } finally {
                    lock.unlock();
                }
            }
        };
        CompletableFuture<Void> other = CompletableFuture.runAsync(add);
        add.run();
        other.get(30, TimeUnit.SECONDS);
        assertEquals(2L * n, counter);
    }

    @Test
    void theHolderMayTakeItAgainAndReleasesItOnTheLastUnlock() throws Exception {
        SendLock lock = new SendLock();
        lock.lock();
        lock.lock();
        assertTrue(lock.isHeldByCurrentThread());
        lock.unlock();
        assertTrue(lock.isHeldByCurrentThread(), "held once more");
        CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(() -> {
            lock.lock();
            lock.unlock();
            return true;
        });
        Thread.sleep(50);
        assertFalse(blocked.isDone(), "another thread waits while the lock is held");
        lock.unlock();
        assertTrue(blocked.get(10, TimeUnit.SECONDS));
        assertFalse(lock.isHeldByCurrentThread());
    }

    @Test
    void onlyTheHolderReleasesIt() throws Exception {
        SendLock lock = new SendLock();
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        lock.lock();
        try {
            Throwable[] thrown = new Throwable[1];
            Thread other = Thread.ofPlatform().start(() -> {
                try {
                    lock.unlock();
                } catch (Throwable t) {
                    thrown[0] = t;
                }
            });
            other.join(10_000);
            assertTrue(thrown[0] instanceof IllegalMonitorStateException, "released by another thread");
            assertTrue(lock.isHeldByCurrentThread());
        } finally {
            lock.unlock();
        }
    }
}
