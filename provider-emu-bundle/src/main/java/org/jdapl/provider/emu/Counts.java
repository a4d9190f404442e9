package org.jdapl.provider.emu;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdapl.dat.Counters;

/**
 * The 64-bit counters of one IA, EP or EVD (OFED's DAT_COUNTERS): plain longs that the thread
 * moving the object's data adds to with opaque writes, costing a load and a store on the data path
 * (no fence, no lock, no allocation), and that readers take racily, never torn. The writers of one
 * counter are ordered by the lock the counted operation holds (the EP's send lock or the domain
 * lock); a counter that consumers bump from several threads at once without a lock (EVD dequeues by
 * several threads) may miss a count. A reset zeroes the counters; an addition racing with it may be
 * lost.
 */
final class Counts {
    private static final VarHandle AT = MethodHandles.arrayElementVarHandle(long[].class);
    /** Longs of padding before the first counter and after the last: a cache line each. */
    private static final int PAD = 8;
    private final long[] values;
    private final int size;
    /**
     * Whether this object counts: {@code -Djdapl.emu.counters=false} when it was made leaves its
     * counters at 0 (the benchmark measures what counting costs the data path with it).
     */
    private final boolean on = !"false".equals(System.getProperty("jdapl.emu.counters"));

    Counts(int size) {
        this.size = size;
        this.values = new long[size + 2 * PAD];
    }

    void inc(int counter) {
        if (on) {
            int i = counter + PAD;
            AT.setOpaque(values, i, (long) AT.getOpaque(values, i) + 1);
        }
    }

    void add(int counter, long n) {
        if (on) {
            int i = counter + PAD;
            AT.setOpaque(values, i, (long) AT.getOpaque(values, i) + n);
        }
    }

    /** Adds these counters into {@code into} (then zeroes them if {@code reset}). */
    void addInto(long[] into, boolean reset) {
        for (int i = 0; i < size; i++) {
            into[i] += (long) AT.getOpaque(values, i + PAD);
            if (reset) {
                AT.setOpaque(values, i + PAD, 0L);
            }
        }
    }

    /** The counters of {@code type} in {@code sides} summed as they are now, then zeroed if {@code reset}. */
    static <C extends Enum<C>> Counters<C> query(Class<C> type, boolean reset, Counts... sides) {
        long[] now = new long[type.getEnumConstants().length];
        for (Counts c : sides) {
            c.addInto(now, reset);
        }
        return Counters.of(type, now);
    }
}
