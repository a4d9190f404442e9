package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdapl.dat.Counters;

/**
 * The 64-bit counters of one IA, EP or EVD (OFED's DAT_COUNTERS): plain longs that the thread owning
 * the counted operation adds to with opaque writes, a load and a store on the data path (no fence,
 * no lock, no allocation), and that readers take racily, never torn. An EP's counters are written
 * under the EP's lock, an EVD's producer counters under its CQ's poll lock or by the event thread,
 * the IA's under its object table's monitor; an EVD's consumer counters are bumped by the threads
 * that dequeue and wait, so concurrent consumers may miss a count. A reset zeroes the counters; an
 * addition racing with it may be lost.
 *
 * <p>Behaviours: EXT_09.
 */
final class Counts {
    private static final VarHandle AT = MethodHandles.arrayElementVarHandle(long[].class);
    /** Longs of padding before the first counter and after the last: a cache line each. */
    private static final int PAD = 8;
    private final long[] values;
    private final int size;

    Counts(int size) {
        this.size = size;
        this.values = new long[size + 2 * PAD];
    }

    /** Counters for every constant of {@code type}. */
    static Counts of(Class<? extends Enum<?>> type) {
        return new Counts(type.getEnumConstants().length);
    }

    void inc(Enum<?> counter) {
        int i = counter.ordinal() + PAD;
        AT.setOpaque(values, i, (long) AT.getOpaque(values, i) + 1);
    }

    /** Counts one operation of {@code counter} and its bytes in the counter after it (its {@code _DATA}). */
    void incWithData(Enum<?> counter, long bytes) {
        int i = counter.ordinal() + PAD;
        AT.setOpaque(values, i, (long) AT.getOpaque(values, i) + 1);
        AT.setOpaque(values, i + 1, (long) AT.getOpaque(values, i + 1) + bytes);
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
