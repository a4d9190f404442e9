package org.jdapl.tools;

import java.util.Locale;

/** How the tools print durations, sizes and rates. */
public final class Units {
    private Units() {
    }

    /** A duration given in nanoseconds, e.g. {@code 812 ns}, {@code 12.3 us}, {@code 4.56 ms}, {@code 1.23 s}. */
    public static String duration(double nanos) {
        if (nanos < 1_000) {
            return String.format(Locale.ROOT, "%.0f ns", nanos);
        }
        if (nanos < 1_000_000) {
            return String.format(Locale.ROOT, "%.2f us", nanos / 1e3);
        }
        if (nanos < 1_000_000_000) {
            return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
        }
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    /** A byte count, e.g. {@code 64 B}, {@code 4 KiB}, {@code 1.5 MiB}. */
    public static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        if (bytes < 1024 * 1024) {
            return trim(bytes / 1024.0) + " KiB";
        }
        if (bytes < 1024L * 1024 * 1024) {
            return trim(bytes / (1024.0 * 1024)) + " MiB";
        }
        return trim(bytes / (1024.0 * 1024 * 1024)) + " GiB";
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? String.valueOf((long) value) : String.format(Locale.ROOT, "%.1f", value);
    }

    /** A bandwidth: {@code bytes} moved in {@code nanos}, in MB/s (10^6 bytes per second). */
    public static String bandwidth(double bytes, double nanos) {
        if (nanos <= 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.1f MB/s", bytes / nanos * 1e3);
    }

    /** A rate: {@code count} events in {@code nanos}, per second. */
    public static String rate(double count, double nanos) {
        if (nanos <= 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.0f/s", count / nanos * 1e9);
    }
}
