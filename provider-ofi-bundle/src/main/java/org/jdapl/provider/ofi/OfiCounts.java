package org.jdapl.provider.ofi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdapl.dat.Counters;

/**
 * The 64-bit counters of one IA, EP or EVD (OFED's DAT_COUNTERS): plain longs added to with opaque
 * writes by the thread that holds the counted object's lock (a load and a store on the data path: no
 * fence, no allocation), read racily by queries, never torn. A counter that several threads bump
 * without a common lock (EVD dequeues by several consumers) may miss a count; a reset racing with an
 * addition may lose it.
 */
final class OfiCounts {
    private static final VarHandle AT = MethodHandles.arrayElementVarHandle(long[].class);
    /** Longs of padding before the first counter and after the last: a cache line each. */
    private static final int PAD = 8;
    private final long[] values;
    private final int size;

    OfiCounts(int size) {
        this.size = size;
        this.values = new long[size + 2 * PAD];
    }

    void inc(Enum<?> counter) {
        int i = counter.ordinal() + PAD;
        AT.setOpaque(values, i, (long) AT.getOpaque(values, i) + 1);
    }

    /** Counts one operation of {@code counter} and {@code bytes} on the counter after it (its _DATA). */
    void inc(Enum<?> counter, long bytes) {
        inc(counter);
        int i = counter.ordinal() + 1 + PAD;
        AT.setOpaque(values, i, (long) AT.getOpaque(values, i) + bytes);
    }

    /** Adds {@code n} to the counter of ordinal {@code i}. */
    void addAt(int i, long n) {
        AT.setOpaque(values, i + PAD, (long) AT.getOpaque(values, i + PAD) + n);
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
    static <C extends Enum<C>> Counters<C> query(Class<C> type, boolean reset, Iterable<OfiCounts> sides) {
        long[] now = new long[type.getEnumConstants().length];
        for (OfiCounts c : sides) {
            c.addInto(now, reset);
        }
        return Counters.of(type, now);
    }
}
