package org.jdapl.bench;

import java.lang.management.ManagementFactory;

/**
 * Heap bytes allocated per operation during a measurement, from the JVM's allocation counters
 * ({@code com.sun.management.ThreadMXBean}): the bytes every thread of the JVM allocated between the
 * start and the end of the timed part (the measuring thread, the peer thread, the provider's I/O
 * threads alike), divided by the operations (round trips, RDMA operations, messages) it counted; or,
 * where the operations run in threads of the measurement's own (the message rate of several EP pairs),
 * the bytes those threads allocated over their loops, each counted by the thread itself
 * ({@link #ofThisThread}, {@link #recordBytes}), so that nothing the main thread does while it waits
 * for them is counted.
 *
 * <p>The timed loops record their figure here when they end ({@link #record}); the table takes it
 * ({@link #take}) right after the measurement, so a measurement without a figure (a program outside
 * the JVM) shows none. The benchmarks run one measurement at a time.
 */
final class HeapBytes {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static volatile double last = Double.NaN;

    private HeapBytes() {
    }

    /** The heap bytes every thread of the JVM has allocated so far (exited threads included). */
    static long now() {
        return THREADS.getTotalThreadAllocatedBytes();
    }

    /** The heap bytes the calling thread has allocated so far. */
    static long ofThisThread() {
        return THREADS.getCurrentThreadAllocatedBytes();
    }

    /** Records {@code bytes}, allocated by the threads that ran them, per one of {@code ops} operations. */
    static void recordBytes(long bytes, long ops) {
        last = ops > 0 ? (double) bytes / ops : Double.NaN;
    }

    /** Records the bytes allocated since {@code from} (a {@link #now()}) per one of {@code ops} operations. */
    static void record(long from, long ops) {
        long bytes = now() - from;
        last = ops > 0 ? (double) bytes / ops : Double.NaN;
    }

    /** Divides the figure just recorded by {@code n}: a loop that timed {@code n} operations per sample. */
    static void perBatch(int n) {
        last = last / n;
    }

    /** The figure the last measurement recorded (NaN if none) and forgets it. */
    static double take() {
        double v = last;
        last = Double.NaN;
        return v;
    }

    /** One decimal, {@code 0.0} when nothing was allocated, {@code -} without a figure. */
    static String format(double bytesPerOp) {
        return Double.isNaN(bytesPerOp) ? "-" : String.format("%.1f", bytesPerOp);
    }
}
