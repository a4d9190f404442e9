package org.jdapl.provider.ofa;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The room of one EVD's CQ for completions: its size, and the completions that may still come (work
 * requests posted and not yet retired, and the whole depth of the queues it covers), so that a post
 * never makes the CQ overflow. Taken and given back by the EPs' queues ({@link WorkQueue},
 * {@link SendQueue}); the EVD sets the size when it attaches or resizes its CQ.
 */
final class CqRoom {
    private volatile int capacity;
    /** Work requests posted to queues of this CQ and not yet retired: each may still produce an entry. */
    private final AtomicInteger reserved = new AtomicInteger();

    int capacity() {
        return capacity;
    }

    /** The CQ's size as the device made it (at create and after {@code dat_evd_resize}). */
    void setCapacity(int cqe) {
        capacity = cqe;
    }

    /**
     * Takes room for every completion a queue of {@code depth} work requests can have outstanding, for
     * the life of its EP (IA lock held, at {@code dat_ep_create}); false, and nothing taken, if the CQ
     * has not that much room left. The posts of a queue so covered reserve nothing each: its ring
     * never holds more than {@code depth} requests, so its completions always fit.
     */
    boolean reserveQueue(int depth) {
        int now;
        do {
            now = reserved.get();
            if (now + (long) depth > capacity) {
                return false;
            }
        } while (!reserved.compareAndSet(now, now + depth));
        return true;
    }

    /** Takes room for one more work request's completion; false if the CQ could overflow. */
    boolean reserve() {
        if (reserved.incrementAndGet() > capacity) {
            reserved.decrementAndGet();
            return false;
        }
        return true;
    }

    void unreserve() {
        reserved.decrementAndGet();
    }

    void unreserve(int n) {
        if (n != 0) {
            reserved.addAndGet(-n);
        }
    }

    /** Room taken for completions that may still come (reserved requests and covered queues). */
    int reserved() {
        return reserved.get();
    }
}
