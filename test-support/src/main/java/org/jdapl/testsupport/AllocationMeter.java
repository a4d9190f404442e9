package org.jdapl.testsupport;

import java.lang.management.ManagementFactory;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The heap bytes a data path allocates over a loop of operations, the measure of the zero-allocation
 * tests (OBJ_07, OBJ_08): the JVM's per-thread allocation counters
 * ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}) of the calling thread and of the
 * provider's threads that take part (its I/O, progress or event threads), read before and after a
 * round of operations. After a warm-up the rounds repeat up to a maximum, the first that allocated
 * nothing ending them, and the figure is the least of them: a one-time allocation of the JVM's (a
 * compilation's switch of the loop to compiled code, a lock's queue node on a loaded machine) falls
 * in one round, an allocation per operation shows in every round as at least as many bytes as
 * operations.
 *
 * <pre>{@code
 * AllocationMeter.Result r = new AllocationMeter(20_000, 10_000, 5)
 *         .threads(() -> AllocationMeter.threadsNamed(n -> n.startsWith("jdapl-ofi-")))
 *         .measure(i -> { post(i); take(i); });
 * assertEquals(0, r.leastBytes());
 * }</pre>
 */
public final class AllocationMeter {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** One operation of the measured loop ({@code i} counts from 0 over the warm-up and each round). */
    @FunctionalInterface
    public interface Op {
        void run(long i);
    }

    /**
     * What {@link #measure} found.
     *
     * @param leastBytes the least bytes allocated in a round
     * @param rounds the rounds run
     * @param lastRoundNanos how long the last round took
     * @param threads how many threads beside the calling one were counted
     */
    public record Result(long leastBytes, int rounds, long lastRoundNanos, int threads) {
        /** Heap bytes per operation of the least round. */
        public double bytesPerOp(int ops) {
            return (double) leastBytes / ops;
        }
    }

    private final int warmUp;
    private final int ops;
    private final int maxRounds;
    private Supplier<long[]> threads = () -> new long[0];

    /**
     * @param warmUp operations run before the first round, not counted
     * @param ops operations per round
     * @param maxRounds rounds at most
     */
    public AllocationMeter(int warmUp, int ops, int maxRounds) {
        if (warmUp < 0 || ops <= 0 || maxRounds <= 0) {
            throw new IllegalArgumentException("warm-up " + warmUp + ", ops " + ops + ", rounds " + maxRounds);
        }
        this.warmUp = warmUp;
        this.ops = ops;
        this.maxRounds = maxRounds;
    }

    /**
     * Counts, beside the calling thread, the threads whose ids {@code ids} gives, asked once the warm-up
     * has run (so that threads the warm-up started are found).
     */
    public AllocationMeter threads(Supplier<long[]> ids) {
        this.threads = ids;
        return this;
    }

    /** Runs the warm-up, then the rounds of {@code op} until one allocated nothing or all ran. */
    public Result measure(Op op) {
        for (int i = 0; i < warmUp; i++) {
            op.run(i);
        }
        long[] ids = threads.get();
        long least = Long.MAX_VALUE;
        long nanos = 0;
        int rounds = 0;
        while (rounds < maxRounds && least > 0) {
            long t0 = System.nanoTime();
            long before = allocated(ids);
            for (int i = 0; i < ops; i++) {
                op.run(i);
            }
            least = Math.min(least, allocated(ids) - before);
            nanos = System.nanoTime() - t0;
            rounds++;
        }
        return new Result(least, rounds, nanos, ids.length);
    }

    /** The calling thread's bytes allocated so far and those of the threads {@code others} names. */
    public static long allocated(long[] others) {
        long s = THREADS.getCurrentThreadAllocatedBytes();
        for (long id : others) {
            s += THREADS.getThreadAllocatedBytes(id);
        }
        return s;
    }

    /** The ids of the live threads whose names {@code name} accepts. */
    public static long[] threadsNamed(Predicate<String> name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> name.test(t.getName()))
                .mapToLong(Thread::threadId).toArray();
    }
}
