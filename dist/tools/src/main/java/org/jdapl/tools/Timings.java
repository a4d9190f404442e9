package org.jdapl.tools;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/** The costs of the operations of one side of a test, in the order they were first measured. */
public final class Timings {
    /** One measured operation: how many times and how long in total. */
    public record Entry(long count, long nanos) {
        /** The mean cost of one. */
        public double mean() {
            return count == 0 ? 0 : (double) nanos / count;
        }
    }

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    /** Adds {@code count} operations that took {@code nanos} together. */
    public synchronized void add(String name, long count, long nanos) {
        entries.merge(name, new Entry(count, nanos), (a, b) -> new Entry(a.count + b.count, a.nanos + b.nanos));
    }

    /** Runs {@code action}, adds its cost as one operation and returns its result. */
    public <T> T time(String name, Supplier<T> action) {
        long start = System.nanoTime();
        T result = action.get();
        add(name, 1, System.nanoTime() - start);
        return result;
    }

    /** Runs {@code action} and adds its cost as one operation. */
    public void run(String name, Runnable action) {
        long start = System.nanoTime();
        action.run();
        add(name, 1, System.nanoTime() - start);
    }

    /** The entry of that name, or null. */
    public synchronized Entry get(String name) {
        return entries.get(name);
    }

    /** The entries in measuring order. */
    public synchronized Map<String, Entry> entries() {
        return new LinkedHashMap<>(entries);
    }
}
