package org.jdapl.provider.emu.evd;

import java.util.ArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * EVD waiters to wake once the current thread has released its domain lock. An event queued under
 * the lock is visible at once; waking its waiter only after the lock is released lets the waiter
 * post its next work without first blocking on the lock the waker still holds. The list is the
 * thread's own: threads of different connections share nothing here.
 */
public final class Wakeups {
    private static final ThreadLocal<ArrayList<EventQueue>> PENDING = ThreadLocal.withInitial(ArrayList::new);

    private Wakeups() {
    }

    /** Remembers that the waiters of {@code events} are to be woken. */
    static void defer(EventQueue events) {
        ArrayList<EventQueue> list = PENDING.get();
        if (!list.contains(events)) {
            list.add(events);
        }
    }

    /**
     * Releases a domain lock taken for a post (which runs its body inline, no lambda on the data
     * path), then, once the thread holds it no more, wakes the waiters it deferred.
     */
    public static void release(ReentrantLock lock) {
        lock.unlock();
        if (!lock.isHeldByCurrentThread()) {
            run();
        }
    }

    /** Wakes the waiters deferred by this thread (called with no domain lock held). */
    public static void run() {
        ArrayList<EventQueue> list = PENDING.get();
        if (list.isEmpty()) {
            return;
        }
        int n = list.size();
        for (int i = 0; i < n; i++) {
            list.get(i).wakeWaiters();
        }
        list.clear();
    }
}
