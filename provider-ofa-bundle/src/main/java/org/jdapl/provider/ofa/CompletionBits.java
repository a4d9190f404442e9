package org.jdapl.provider.ofa;

import java.util.EnumSet;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;

/**
 * A post's completion flags as bits. The sets consumers pass are nearly always
 * {@link Dat#COMPLETION_DEFAULT} or an {@link EnumSet}; naming those two here lets the JIT check the
 * class once and inline the membership tests, where three {@code Set.contains} calls through the
 * interface would each be a dispatched call on every post.
 */
final class CompletionBits {
    static final int SUPPRESS = 1;
    static final int SOLICITED_WAIT = 2;
    static final int BARRIER_FENCE = 4;
    private static final Class<?> SMALL_ENUM_SET = EnumSet.noneOf(CompletionFlag.class).getClass();

    private CompletionBits() {
    }

    /** The bits of {@code flags} (not null). */
    @SuppressWarnings("unchecked")
    static int of(Set<CompletionFlag> flags) {
        if (flags == Dat.COMPLETION_DEFAULT) {
            return 0;
        }
        if (flags.getClass() == SMALL_ENUM_SET) {
            EnumSet<CompletionFlag> set = (EnumSet<CompletionFlag>) flags;
            return (set.contains(CompletionFlag.SUPPRESS) ? SUPPRESS : 0)
                    | (set.contains(CompletionFlag.SOLICITED_WAIT) ? SOLICITED_WAIT : 0)
                    | (set.contains(CompletionFlag.BARRIER_FENCE) ? BARRIER_FENCE : 0);
        }
        return bits(flags);
    }

    private static int bits(Set<CompletionFlag> flags) {
        return (flags.contains(CompletionFlag.SUPPRESS) ? SUPPRESS : 0)
                | (flags.contains(CompletionFlag.SOLICITED_WAIT) ? SOLICITED_WAIT : 0)
                | (flags.contains(CompletionFlag.BARRIER_FENCE) ? BARRIER_FENCE : 0);
    }
}
