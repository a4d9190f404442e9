package org.jdapl.provider.emu.evd;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads parked waiting on one EVD, guarded by its queue lock: a list of the queue's own rather
 * than a {@code Condition}, whose every wait allocates a node of the JDK's. A waiter is listed before
 * it releases the lock and parks, so a wake-up between the two is not lost (an unpark before the park
 * makes the park return at once). The array grows only when more threads park at once than ever
 * before; parking and waking allocate nothing. A lone waiter is unparked after the waker released the
 * lock ({@link #sole}): woken under it, the waiter would find the lock held and spin for it.
 */
final class ParkedWaiters {
    private Thread[] threads = new Thread[4];
    private int count;

    /** How many threads are listed. */
    int count() {
        return count;
    }

    /** Lists the calling thread (queue lock held), before it releases the lock and parks. */
    void add(Thread self) {
        if (count == threads.length) {
            threads = Arrays.copyOf(threads, count * 2);
        }
        threads[count++] = self;
    }

    /** Removes {@code self} from the list (queue lock held again after its park). */
    void remove(Thread self) {
        for (int i = 0; i < count; i++) {
            if (threads[i] == self) {
                threads[i] = threads[--count];
                threads[count] = null;
                return;
            }
        }
    }

    /**
     * The one listed thread, or null if none or several (queue lock held): the caller unparks it after
     * releasing the lock, so that the thread it wakes does not find the lock still held.
     */
    Thread sole() {
        return count == 1 ? threads[0] : null;
    }

    /** Wakes every listed thread (queue lock held); each removes itself once it has the lock. */
    void unparkAll() {
        for (int i = 0; i < count; i++) {
            LockSupport.unpark(threads[i]);
        }
    }
}
