package org.jdapl.tools;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A progress line for long runs ({@code label 1234/10000 (12%)}), redrawn in place a few times a
 * second by a daemon thread. It is drawn only when standard output is a terminal, so that output
 * captured in a file or a pipe holds the results alone.
 */
public final class Progress implements AutoCloseable {
    private static final long PERIOD_MILLIS = 250;
    /** Runs shorter than this never show a progress line. */
    private static final long QUIET_MILLIS = 1_000;

    private final PrintStream out;
    private final String label;
    private final long total;
    private final LongSupplier done;
    private final Thread painter;
    private volatile boolean closed;
    private boolean drawn;

    private Progress(PrintStream out, String label, long total, LongSupplier done, boolean enabled) {
        this.out = out;
        this.label = label;
        this.total = total;
        this.done = done;
        this.painter = enabled ? Thread.ofPlatform().daemon().name("progress").unstarted(this::paint) : null;
        if (painter != null) {
            painter.start();
        }
    }

    /** A progress line over {@code total} units of work whose count so far {@code done} returns. */
    public static Progress start(PrintStream out, String label, long total, LongSupplier done) {
        return new Progress(out, label, total, done, isTerminal());
    }

    /** Whether standard output is a terminal (a person is watching). */
    public static boolean isTerminal() {
        var console = System.console();
        return console != null && console.isTerminal();
    }

    private void paint() {
        long start = System.nanoTime();
        try {
            while (!closed) {
                TimeUnit.MILLISECONDS.sleep(PERIOD_MILLIS);
                if (closed || System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(QUIET_MILLIS)) {
                    continue;
                }
                long n = done.getAsLong();
                synchronized (this) {
                    if (!closed) {
                        out.print(String.format(Locale.ROOT, "\r%s %d/%d (%d%%)", label, n, total,
                                total == 0 ? 100 : n * 100 / total));
                        out.flush();
                        drawn = true;
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the painter and erases the line. */
    @Override
    public void close() {
        if (painter == null) {
            return;
        }
        synchronized (this) {
            closed = true;
            if (drawn) {
                out.print("\r\033[K");
                out.flush();
            }
        }
        painter.interrupt();
        try {
            painter.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
