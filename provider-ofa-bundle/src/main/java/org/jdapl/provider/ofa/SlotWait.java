package org.jdapl.provider.ofa;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventSlot;

/**
 * {@code dat_evd_wait} with a threshold of 1 into a caller's {@link EventSlot} on an EVD with a CQ,
 * allocating nothing: the waiter polls the CQ into the slot itself for up to its spin
 * ({@link WaitSpin}), then becomes the EVD's parked slot waiter: it arms the CQ, polls once more
 * (what came before the arm), and parks ({@code LockSupport}, no condition node). The CQ's event
 * wakes it through the IA's event thread, which leaves the poll to it (no event object is made);
 * an event queued on the EVD, the EVD's close (ABORT) and {@code setUnwaitable} wake it too. A
 * waiter that finds another thread waiting, or events queued, waits as {@code waitEvent} does.
 *
 * <p>The waiter's state (who is parked) lives in the EVD's {@link EvdQueue}, whose signals wake it;
 * the slot filling in {@link PollHandoff}; the lock protocol they share is described once, in the
 * EVD's class comment.
 *
 * <p>Behaviours: OBJ_03, OBJ_11.
 */
final class SlotWait {
    private final EvdQueue queue;
    private final PollHandoff handoff;
    private final EvdCq cq;
    /** How long a wait polls before it blocks ({@link WaitSpin}), read when the EVD is created. */
    private final long spinNanos = WaitSpin.nanos();

    SlotWait(EvdQueue queue, PollHandoff handoff, EvdCq cq) {
        this.queue = queue;
        this.handoff = handoff;
        this.cq = cq;
    }

    /**
     * Waits for the EVD's next event into {@code s}; false (nothing taken) where the caller must wait
     * the usual way.
     */
    boolean waitInto(long timeoutMicros, EventSlot s) {
        long start = System.nanoTime();
        boolean infinite = timeoutMicros >= Dat.TIMEOUT_INFINITE;
        long timeout = infinite ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
        long spin = Math.min(spinNanos, timeout);
        while (queue.idle()) {
            if (handoff.pollInto(s, 0)) {
                return true;
            }
            if (System.nanoTime() - start >= spin) {
                break;
            }
            Thread.onSpinWait();
        }
        if (!queue.idle() || !queue.becomeSlotWaiter()) {
            return false;
        }
        try {
            boolean armed = false;
            while (true) {
                if (handoff.pollInto(s, 1) || queue.takeQueued(s)) {
                    return true;
                }
                long left = infinite ? Long.MAX_VALUE : timeout - (System.nanoTime() - start);
                if (left <= 0) {
                    throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no event within " + timeoutMicros + " us");
                }
                if (!armed) {
                    cq.arm(); // then poll once more: a completion before the arm raises no event
                    armed = true;
                    continue;
                }
                if (infinite) {
                    LockSupport.park(queue);
                } else {
                    LockSupport.parkNanos(queue, left);
                }
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new DatException(DatReturnType.INTERRUPTED_CALL, "wait interrupted");
                }
                armed = false;
            }
        } finally {
            queue.leaveSlotWaiter();
        }
    }

    /**
     * The CQ's completion event (event thread): true if a slot waiter is parked for it, now woken to
     * poll the CQ into its slot itself (no event object is made); false if the event thread is to poll.
     */
    boolean wakeForCq() {
        Thread w = queue.slotWaiter();
        if (w != null && !queue.hasCno() && cq.closingUsers.get() == 0) {
            LockSupport.unpark(w);
            return true;
        }
        return false;
    }
}
