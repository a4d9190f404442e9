package org.jdapl.tools.soak;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jdapl.tools.Patterns;

/**
 * Memory for one registered region with a canary on each side: the region is registered, the
 * canaries are not, so a byte that changes in a canary was written outside every registered region.
 */
final class GuardedRegion {
    static final long CANARY = 4096;
    private static final long SEED = 0x6A6461706C63616EL;

    private final MemorySegment whole;
    /** The part to register. */
    final MemorySegment region;

    GuardedRegion(Arena arena, long size) {
        whole = arena.allocate(size + 2 * CANARY, 4096);
        region = whole.asSlice(CANARY, size);
        Patterns.fill(whole.asSlice(0, CANARY), SEED);
        Patterns.fill(whole.asSlice(CANARY + size, CANARY), ~SEED);
    }

    /** Whether both canaries are as they were filled. */
    boolean canariesIntact() {
        return Patterns.mismatch(whole.asSlice(0, CANARY), SEED) < 0
                && Patterns.mismatch(whole.asSlice(CANARY + region.byteSize(), CANARY), ~SEED) < 0;
    }
}
