package org.jdapl.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;

import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;

/**
 * Consumers blocked in {@code dat_evd_wait} and {@code dat_cno_wait} on virtual threads, and their
 * release. Each EVD waiter waits without a timeout on an EVD of its own (every
 * {@value #CQ_EVERY}th one also of the DTO stream, so that providers with completion queues arm
 * one); each CNO waiter on a CNO of its own. Once every waiter is blocked, a software event is posted
 * to every second EVD (its waiter must return that very event), then the IA is closed: every other
 * waiter must return at once, the EVD waiters with DAT_ABORT, the CNO waiters with INVALID_STATE
 * (INVALID_STATE_CNO_DEAD). Each released waiter's latency is measured from {@code close()}
 * returning to its wait's return; 0 for a waiter whose wait returned before {@code close()} did, and
 * for one that, looked at right after {@code close()} returned, had already left its wait (no
 * {@code waitEvent} or {@code waitCno} frame on its stack: its carrier had not yet run it the few
 * lines to where it notes the time). So a provider whose {@code close()} has every waiter out of its
 * wait when it returns shows 0 however loaded the machine; one that leaves them to return later
 * (woken but not yet run, say) shows how much later.
 *
 * <p>Whether the waits unmount their virtual threads is seen from outside (a JFR recording of
 * {@code jdk.VirtualThreadPinned}, and a scheduler of few carriers, where pinned waiters would keep
 * the others from ever starting to wait). The JDK classes a wait parks through are initialized before
 * the waiters start ({@link #initializeParkClasses}): a virtual thread that waits for another thread
 * to initialize a class stays pinned meanwhile (JDK 25), which the recording reports ("Waited for
 * initialization of java.util.concurrent.locks.LockSupport by another thread", seen once in the
 * Soft-RoCE guest) although no wait of the provider pins.
 *
 * <p>Behaviours: OBJ_11.
 */
public final class WaiterRelease {
    /** Every this many EVDs, one has the DTO stream too. */
    public static final int CQ_EVERY = 16;

    /**
     * What a run saw.
     *
     * @param evdWaiters threads that waited on EVDs
     * @param cnoWaiters threads that waited on CNOs
     * @param woken EVD waiters that returned the software event posted to their EVD
     * @param released waiters released by the close with the expected error
     * @param wrong what any waiter returned that it should not have (empty when all is well)
     * @param closeNanos how long {@code close()} took
     * @param latenciesNanos from {@code close()} returning to each released waiter's return, sorted (0:
     *        out of its wait before {@code close()} returned)
     */
    public record Result(int evdWaiters, int cnoWaiters, int woken, int released, List<String> wrong,
                         long closeNanos, long[] latenciesNanos) {
        /** The longest release latency (ns). */
        public long maxLatencyNanos() {
            return latenciesNanos.length == 0 ? 0 : latenciesNanos[latenciesNanos.length - 1];
        }

        /** The median release latency (ns). */
        public long medianLatencyNanos() {
            return latenciesNanos.length == 0 ? 0 : latenciesNanos[latenciesNanos.length / 2];
        }

        /** Waiters released by the close before it returned. */
        public long releasedDuringClose() {
            return Arrays.stream(latenciesNanos).filter(l -> l == 0).count();
        }

        /** One line of figures. */
        public String summary() {
            return String.format("%d EVD waiters, %d CNO waiters: %d woken by their event, %d released by close"
                            + " (%d of them out of their waits when close() returned); close() took %.3f ms; release latency"
                            + " after close() returned: median %.3f ms, max %.3f ms; wrong: %s",
                    evdWaiters, cnoWaiters, woken, released, releasedDuringClose(), closeNanos / 1e6,
                    medianLatencyNanos() / 1e6, maxLatencyNanos() / 1e6, wrong.isEmpty() ? "none" : wrong);
        }
    }

    private WaiterRelease() {
    }

    /**
     * Runs the scenario on {@code ia}, which it closes.
     *
     * @param bound how long each phase may take before the run fails (waiters still blocked, say)
     * @throws AssertionError if a phase does not finish within {@code bound}
     */
    public static Result run(InterfaceAdapter ia, int evdWaiters, int cnoWaiters, Duration bound)
            throws InterruptedException {
        initializeParkClasses();
        int total = evdWaiters + cnoWaiters;
        EventDispatcher[] evds = new EventDispatcher[evdWaiters];
        for (int i = 0; i < evdWaiters; i++) {
            Set<EvdFlag> flags = i % CQ_EVERY == 0 ? EnumSet.of(EvdFlag.SOFTWARE, EvdFlag.DTO)
                    : EnumSet.of(EvdFlag.SOFTWARE);
            evds[i] = ia.createEvd(4, null, flags);
        }
        Cno[] cnos = new Cno[cnoWaiters];
        for (int i = 0; i < cnoWaiters; i++) {
            cnos[i] = ia.createCno(null);
        }
        Object[] outcomes = new Object[total];
        AtomicLongArray returned = new AtomicLongArray(total);
        AtomicInteger waiting = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        Thread[] threads = new Thread[total];
        for (int i = 0; i < total; i++) {
            int w = i;
            threads[i] = Thread.ofVirtual().name("waiter-" + i).start(() -> {
                Object outcome;
                waiting.incrementAndGet();
                try {
                    outcome = w < evdWaiters ? evds[w].waitEvent(Dat.TIMEOUT_INFINITE)
                            : cnos[w - evdWaiters].waitCno(Dat.TIMEOUT_INFINITE);
                } catch (RuntimeException | Error e) {
                    outcome = e;
                }
                returned.set(w, System.nanoTime());
                outcomes[w] = outcome;
                done.incrementAndGet();
            });
        }
        List<String> wrong = new ArrayList<>();
        await(bound, () -> waiting.get() == total && Arrays.stream(threads).allMatch(WaiterRelease::blocked),
                () -> "of " + total + " waiters, " + waiting.get() + " started and "
                        + Arrays.stream(threads).filter(WaiterRelease::blocked).count() + " are blocked ("
                        + done.get() + " returned)");
        int woken = 0;
        for (int i = 0; i < evdWaiters; i += 2) {
            evds[i].postSoftwareEvent(i);
            woken++;
        }
        int expectWoken = woken;
        await(bound, () -> done.get() >= expectWoken, () -> done.get() + " of " + expectWoken
                + " waiters returned after their event");
        for (int i = 0; i < total; i++) {
            boolean shouldHaveReturned = i < evdWaiters && i % 2 == 0;
            if (!shouldHaveReturned && !threads[i].isAlive()) {
                wrong.add("waiter " + i + " returned before the close: " + outcomes[i]);
            }
        }
        long before = System.nanoTime();
        ia.close();
        long closed = System.nanoTime();
        boolean[] outOfWait = new boolean[total];
        for (int i = 0; i < total; i++) {
            outOfWait[i] = returned.get(i) != 0;
        }
        for (int i = 0; i < total; i++) {
            outOfWait[i] = outOfWait[i] || !inWait(threads[i]);
        }
        for (Thread t : threads) {
            t.join(bound.toMillis());
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " was not released within " + bound + " of the IA's close: "
                        + t.getState());
            }
        }
        int released = 0;
        List<Long> latencies = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            Object o = outcomes[i];
            if (i < evdWaiters && i % 2 == 0) {
                if (!(o instanceof DatEvent.Software s) || s.evd() != evds[i] || !Integer.valueOf(i).equals(s.pointer())) {
                    wrong.add("EVD waiter " + i + " returned " + o + " instead of its software event");
                }
                continue;
            }
            latencies.add(outOfWait[i] ? 0 : Math.max(0, returned.get(i) - closed));
            boolean right = o instanceof DatException e && (i < evdWaiters ? e.type() == DatReturnType.ABORT
                    : e.type() == DatReturnType.INVALID_STATE && e.subtype() == DatReturnSubtype.INVALID_STATE_CNO_DEAD);
            if (right) {
                released++;
            } else if (wrong.size() < 10) {
                wrong.add((i < evdWaiters ? "EVD" : "CNO") + " waiter " + i + " returned " + describe(o)
                        + " on the IA's close");
            }
        }
        long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        return new Result(evdWaiters, cnoWaiters, woken, released, List.copyOf(wrong), closed - before, sorted);
    }

    /** Whether {@code t} is still in its {@code waitEvent} or {@code waitCno} call. */
    /** Initializes the classes through which a waiting thread parks, in this thread (see the class comment). */
    static void initializeParkClasses() {
        for (String c : List.of("java.util.concurrent.locks.LockSupport",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode",
                "java.util.concurrent.locks.AbstractQueuedSynchronizer$ExclusiveNode")) {
            try {
                Class.forName(c, true, null);
            } catch (ClassNotFoundException e) {
                // a JDK without it parks otherwise
            }
        }
    }

    private static boolean inWait(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals("waitEvent") || e.getMethodName().equals("waitCno")) {
                return true;
            }
        }
        return false;
    }

    /** Parked (a virtual thread parked has left its carrier, unless it is pinned), or blocked on a monitor. */
    private static boolean blocked(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING || s == Thread.State.BLOCKED;
    }

    private static String describe(Object o) {
        return o instanceof DatException e ? "DatException " + e.type() + "/" + e.subtype() + " (" + e.getMessage() + ")"
                : String.valueOf(o);
    }

    private static void await(Duration bound, BooleanSupplier condition, java.util.function.Supplier<String> state)
            throws InterruptedException {
        long end = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + bound + ": " + state.get());
            }
            Thread.sleep(2);
        }
    }
}
