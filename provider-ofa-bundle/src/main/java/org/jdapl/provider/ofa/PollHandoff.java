package org.jdapl.provider.ofa;

import java.util.function.Consumer;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.EventSlot;

/**
 * The hand-over of the first event a consumer's own poll of an EVD's CQ produces straight to that
 * consumer, without the queue lock: to {@code dat_evd_dequeue} as the event object, or into the
 * caller's {@link EventSlot} (a DTO completion field by field, so that nothing is allocated) for
 * {@code dat_evd_dequeue} and the slot waiter into a slot. It holds only while the EVD's queue is
 * as the poll found it (nothing queued and nobody waiting, or only the slot's own waiter); later
 * events are queued behind it as usual. All its state is guarded by the CQ's poll lock; the lock
 * protocol is described once, in the EVD's class comment.
 *
 * <p>Behaviours: OBJ_03.
 */
final class PollHandoff {
    private final EvdCq cq;
    private final EvdQueue queue;
    /** Where an event goes that a failed poll handed over but the consumer never got: the EVD's queue. */
    private final Consumer<DatEvent> requeue;
    /** The {@link Thread#threadId() id} of the thread polling for a hand-over (0: none). */
    private long dequeuer;
    /** The event handed to {@link #poll()}'s caller. */
    private DatEvent handoff;
    /** Whether the poll fills {@link #slot} (else {@link #handoff}). */
    private boolean slotDequeue;
    /** The caller's slot, which the first event the poll produces fills; null once filled. */
    private EventSlot slot;
    /** What the queue's busy count may hold for the slot to be filled: 1 while the slot's own waiter polls. */
    private int slotBusy;

    PollHandoff(EvdCq cq, EvdQueue queue, Consumer<DatEvent> requeue) {
        this.cq = cq;
        this.queue = queue;
        this.requeue = requeue;
    }

    /**
     * Polls the CQ in this thread; returns the first event the poll produced while nothing was queued
     * and nobody waited (null: none). The common path is kept in this one method, so that the JIT
     * compiles it whole.
     */
    DatEvent poll() {
        DatEvent e;
        cq.lock.lock();
        try {
            dequeuer = Thread.currentThread().threadId();
            cq.pollLocked();
            e = handoff;
            handoff = null;
        } finally {
            dequeuer = 0;
            DatEvent left = handoff;
            handoff = null;
            cq.lock.unlock();
            if (left != null) {
                requeue.accept(left); // the poll failed after the hand-off: the event is queued, not lost
            }
        }
        return e;
    }

    /**
     * Polls the CQ (if any) in this thread; true if the first event the poll produced, while the
     * queue's busy count was {@code busy} (0, or 1 for the slot's own waiter), went into {@code s}.
     */
    boolean pollInto(EventSlot s, int busy) {
        if (!cq.present()) {
            return false;
        }
        boolean filled = false;
        cq.lock.lock();
        try {
            dequeuer = Thread.currentThread().threadId();
            slotDequeue = true;
            slotBusy = busy;
            slot = s;
            cq.pollLocked();
            filled = slot == null;
        } finally {
            boolean failedAfterFill = !filled && slotDequeue && slot == null;
            dequeuer = 0;
            slotDequeue = false;
            slotBusy = 0;
            slot = null;
            cq.lock.unlock();
            if (failedAfterFill) {
                requeue.accept(s.event()); // the poll failed after filling the slot: the event is queued, not lost
            }
        }
        return filled;
    }

    /** Whether this thread polls for a hand-over and the queue is as its poll found it. */
    private boolean open() {
        // Only the polling thread itself, under the CQ's poll lock, ever finds itself in dequeuer.
        return dequeuer == Thread.currentThread().threadId() && queue.busy() == slotBusy;
    }

    /** A provider's event: taken (true) if this thread's poll hands it over, else to be queued. */
    boolean take(DatEvent event) {
        if (!open()) {
            return false;
        }
        if (slotDequeue) {
            EventSlot s = slot;
            if (s != null) {
                s.set(event);
                slot = null;
                return true;
            }
        } else if (handoff == null) {
            handoff = event;
            return true;
        }
        return false;
    }

    /**
     * The slot a successful DTO completion is to be written into field by field (poll lock held), now
     * counted as filled; null: the completion is to be queued as an event.
     */
    EventSlot claimSlot() {
        EventSlot s = slot;
        if (s != null && open()) {
            slot = null;
            return s;
        }
        return null;
    }
}
