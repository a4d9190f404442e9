package org.jdapl.provider.ofa;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
 * <p>Behaviours: OBJ_03, OBJ_11.
 */
final class SlotWait {
    private SlotWait() {
    }

    /**
     * Waits for the EVD's next event into {@code s}; false (nothing taken) where the caller must wait
     * the usual way.
     */
    static boolean waitInto(OfaEvd evd, long timeoutMicros, EventSlot s, long spinNanos) {
        long start = System.nanoTime();
        boolean infinite = timeoutMicros >= org.jdapl.dat.Dat.TIMEOUT_INFINITE;
        long timeout = infinite ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
        long spin = Math.min(spinNanos, timeout);
        while (evd.idle()) {
            if (evd.pollInto(s, 0)) {
                return true;
            }
            if (System.nanoTime() - start >= spin) {
                break;
            }
            Thread.onSpinWait();
        }
        if (!evd.idle() || !evd.becomeSlotWaiter()) {
            return false;
        }
        try {
            boolean armed = false;
            while (true) {
                if (evd.pollInto(s, 1) || evd.takeQueued(s)) {
                    return true;
                }
                long left = infinite ? Long.MAX_VALUE : timeout - (System.nanoTime() - start);
                if (left <= 0) {
                    throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no event within " + timeoutMicros + " us");
                }
                if (!armed) {
                    evd.cq.arm(); // then poll once more: a completion before the arm raises no event
                    armed = true;
                    continue;
                }
                if (infinite) {
                    LockSupport.park(evd);
                } else {
                    LockSupport.parkNanos(evd, left);
                }
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new DatException(DatReturnType.INTERRUPTED_CALL, "wait interrupted");
                }
                armed = false;
            }
        } finally {
            evd.leaveSlotWaiter();
        }
    }
}
