package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.junit.jupiter.api.Test;

/** Completion flags as bits, for every kind of set a consumer may pass. */
class CompletionBitsTest {
    @Test
    void everySetKindGivesTheBitsOfItsMembers() {
        assertEquals(0, CompletionBits.of(Dat.COMPLETION_DEFAULT));
        assertEquals(0, CompletionBits.of(EnumSet.noneOf(CompletionFlag.class)));
        assertEquals(CompletionBits.SUPPRESS | CompletionBits.BARRIER_FENCE,
                CompletionBits.of(EnumSet.of(CompletionFlag.SUPPRESS, CompletionFlag.BARRIER_FENCE)));
        assertEquals(CompletionBits.SOLICITED_WAIT, CompletionBits.of(Set.of(CompletionFlag.SOLICITED_WAIT)));
        assertEquals(CompletionBits.SUPPRESS | CompletionBits.SOLICITED_WAIT, CompletionBits.of(
                Collections.unmodifiableSet(EnumSet.of(CompletionFlag.SUPPRESS, CompletionFlag.SOLICITED_WAIT))));
        Set<CompletionFlag> mutable = new HashSet<>();
        assertEquals(0, CompletionBits.of(mutable));
        mutable.add(CompletionFlag.SUPPRESS);
        assertEquals(CompletionBits.SUPPRESS, CompletionBits.of(mutable), "read at every call, never cached");
        EnumSet<CompletionFlag> enumSet = EnumSet.noneOf(CompletionFlag.class);
        assertEquals(0, CompletionBits.of(enumSet));
        enumSet.add(CompletionFlag.BARRIER_FENCE);
        assertEquals(CompletionBits.BARRIER_FENCE, CompletionBits.of(enumSet));
    }
}
