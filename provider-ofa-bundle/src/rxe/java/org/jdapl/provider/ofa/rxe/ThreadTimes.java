package org.jdapl.provider.ofa.rxe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The scheduler's account of each thread of this process ({@code /proc/self/task/<tid>/schedstat}:
 * time on the CPU, time runnable but waiting for the CPU, and the number of times it was given the CPU),
 * taken before and after a measured round so that a benchmark can say where its threads' time went.
 */
final class ThreadTimes {
    private final Map<String, long[]> byThread;

    private ThreadTimes(Map<String, long[]> byThread) {
        this.byThread = byThread;
    }

    /** The account now; empty where the kernel keeps none. */
    static ThreadTimes now() {
        Map<String, long[]> m = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    String name = Files.readString(t.resolve("comm")).strip() + "/" + t.getFileName();
                    String[] f = Files.readString(t.resolve("schedstat")).strip().split(" ");
                    m.put(name, new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])});
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile, or the kernel keeps no schedstat
                }
            }
        } catch (IOException e) {
            // no /proc
        }
        return new ThreadTimes(m);
    }

    /** One line per thread that ran since {@code before}: on-CPU and run-queue milliseconds, and slices. */
    String since(ThreadTimes before, String prefix) {
        StringBuilder b = new StringBuilder();
        byThread.forEach((name, now) -> {
            long[] then = before.byThread.getOrDefault(name, new long[3]);
            long ran = now[0] - then[0];
            if (ran >= 100_000) {
                b.append(String.format("%s thread %-28s ran %8.1f ms, runnable waiting %8.1f ms, %6d slices%n",
                        prefix, name, ran / 1e6, (now[1] - then[1]) / 1e6, now[2] - then[2]));
            }
        });
        return b.toString();
    }
}
