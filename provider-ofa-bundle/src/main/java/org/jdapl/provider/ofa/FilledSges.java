package org.jdapl.provider.ofa;

import java.util.List;
import org.jdapl.dat.LmrTriplet;

/**
 * Which segment list one of an EP's native scatter/gather arrays holds, already checked. A post that
 * names the same immutable list again (a consumer reposting its buffer with the list it built once)
 * finds its entries written and checked, unless an LMR of the IA has been freed since: a freed LMR's
 * segments must be looked at again. Lists that can change ({@code ArrayList}, views) are never
 * remembered, but what the array was filled with (its bytes, a freed LMR) is. Guarded by the EP's lock.
 */
final class FilledSges {
    private static final Class<?> LIST_12 = List.of(1).getClass();
    private static final Class<?> LIST_N = List.of(1, 2, 3).getClass();

    private List<LmrTriplet> iov;
    private int lmrFrees;
    private long total;
    private boolean namedFreedLmr;

    /** Whether the array holds {@code list}, filled when the IA had freed {@code frees} LMRs. */
    boolean holds(List<LmrTriplet> list, int frees) {
        return list == iov && frees == lmrFrees;
    }

    /** The bytes the entries the array was last filled with add up to. */
    long total() {
        return total;
    }

    /** Whether an entry the array was last filled with named an LMR already freed then. */
    boolean namedFreedLmr() {
        return namedFreedLmr;
    }

    /** The array is being written: it holds no known list until {@link #filled}. */
    void forget() {
        iov = null;
    }

    /** The array now holds {@code list}, checked when the IA had freed {@code frees} LMRs. */
    void filled(List<LmrTriplet> list, int frees, long bytes, boolean freed) {
        Class<?> c = list.getClass();
        iov = c == LIST_12 || c == LIST_N ? list : null;
        lmrFrees = frees;
        total = bytes;
        namedFreedLmr = freed;
    }
}
