package org.jdapl.dat;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What {@code dat_query_counters} with {@code DCNT_*_ALL_COUNTERS} returns: the 64-bit counters of one
 * IA, EP or EVD ({@link IaCounter}, {@link EpCounter}, {@link EvdCounter}), taken at one moment. The
 * values are read without stopping the data path: counters written meanwhile by other threads may
 * be seen a little late, never torn. A snapshot is a value: immutable and serializable.
 *
 * @param <C> the counter enum
 * @since 1.4
 */
public final class Counters<C extends Enum<C>> implements java.io.Serializable {
    @java.io.Serial
    private static final long serialVersionUID = 1L;

    private final Class<C> type;
    private final long[] values;

    private Counters(Class<C> type, long[] values) {
        this.type = type;
        this.values = values;
    }

    /**
     * The counters {@code values}, indexed by the enum's ordinals (copied).
     *
     * @throws IllegalArgumentException if the array's length is not the enum's size
     */
    public static <C extends Enum<C>> Counters<C> of(Class<C> type, long[] values) {
        if (values.length != type.getEnumConstants().length) {
            throw new IllegalArgumentException(values.length + " values for " + type.getSimpleName());
        }
        return new Counters<>(type, values.clone());
    }

    /** All counters of {@code type} at zero. */
    public static <C extends Enum<C>> Counters<C> zero(Class<C> type) {
        return new Counters<>(type, new long[type.getEnumConstants().length]);
    }

    /** The counter enum. */
    public Class<C> type() {
        return type;
    }

    /** One counter ({@code dat_query_counters} with that counter). */
    public long get(C counter) {
        return values[counter.ordinal()];
    }

    /** The values, indexed by the enum's ordinals (a copy). */
    public long[] values() {
        return values.clone();
    }

    /** The sum of these counters and {@code other}'s, counter by counter. */
    public Counters<C> plus(Counters<C> other) {
        long[] sum = values.clone();
        for (int i = 0; i < sum.length; i++) {
            sum[i] += other.values[i];
        }
        return new Counters<>(type, sum);
    }

    /** The counters by their OFED names ({@code DCNT_EP_POST_SEND} ...), in the enum's order. */
    public Map<String, Long> byName() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (C c : type.getEnumConstants()) {
            m.put(datName(c), values[c.ordinal()]);
        }
        return m;
    }

    /** The OFED name of {@code c}. */
    static String datName(Enum<?> c) {
        return switch (c) {
            case IaCounter i -> i.datName();
            case EpCounter e -> e.datName();
            case EvdCounter e -> e.datName();
            default -> c.name();
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Counters<?> c && c.type == type && Arrays.equals(c.values, values);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, Arrays.hashCode(values));
    }

    /** What {@code dat_print_counters} prints: one {@code NAME = value} line per counter. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        byName().forEach((k, v) -> b.append(k).append(" = ").append(v).append('\n'));
        return b.toString();
    }
}
