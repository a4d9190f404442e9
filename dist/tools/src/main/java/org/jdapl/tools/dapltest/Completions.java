package org.jdapl.tools.dapltest;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.tools.Events;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;

/**
 * The DTO completions of one EVD taken by cookie: several endpoints share the EVD and complete in
 * any order among themselves, so a completion that arrives before its turn is kept until it is
 * asked for. Every completion must be a success; waits are bounded, blocking
 * ({@code dat_evd_wait}) or polling ({@code dat_evd_dequeue} in a loop).
 */
final class Completions {
    /** Polls between two yields of the CPU. */
    private static final int YIELD_EVERY = 64;

    private final EventDispatcher evd;
    private final long timeoutMicros;
    private final boolean poll;
    private final Map<Long, DatEvent.DtoCompletion> early = new HashMap<>();

    Completions(EventDispatcher evd, long timeoutMicros, boolean poll) {
        this.evd = evd;
        this.timeoutMicros = timeoutMicros;
        this.poll = poll;
    }

    /**
     * The successful completion with {@code cookie} of the given operation.
     *
     * @throws ToolException FAILURE on time-out, an error status or another kind of event
     */
    DatEvent.DtoCompletion take(long cookie, DtoOperation operation, String what) {
        DatEvent.DtoCompletion c = early.remove(cookie);
        while (c == null) {
            DatEvent.DtoCompletion next = next(what);
            Events.checkSuccess(next, null, what);
            if (next.cookie() == cookie) {
                c = next;
            } else if (early.putIfAbsent(next.cookie(), next) != null) {
                throw ToolException.failure(what + ": a second completion with cookie " + next.cookie());
            }
        }
        if (c.operation() != operation) {
            throw ToolException.failure(what + ": completed as " + c.operation() + ", not " + operation);
        }
        return c;
    }

    private DatEvent.DtoCompletion next(String what) {
        DatEvent event;
        if (poll) {
            long deadline = System.nanoTime() + timeoutMicros * 1_000;
            Optional<DatEvent> polled = dequeue(what);
            for (int spins = 1; polled.isEmpty(); spins++) {
                if ((spins & (YIELD_EVERY - 1)) == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        throw ToolException.failure("timed out after " + Units.duration(timeoutMicros * 1_000.0)
                                + " polling for " + what);
                    }
                    // A provider whose progress needs a thread of this machine (the emulated tcp
                    // fabric) gets the CPU now and then.
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
                polled = dequeue(what);
            }
            event = polled.get();
        } else {
            event = Events.next(evd, timeoutMicros, what);
        }
        if (event instanceof DatEvent.DtoCompletion c) {
            return c;
        }
        throw ToolException.failure("waiting for " + what + ", got " + Events.describe(event));
    }

    private Optional<DatEvent> dequeue(String what) {
        try {
            return evd.dequeue();
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "polling for " + what + ": " + e.getMessage(), e);
        }
    }
}
