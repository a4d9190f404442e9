package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.jdapl.dat.LmrTriplet;
import org.junit.jupiter.api.Test;

/**
 * What a post may take as already checked (LMR_04: a list reposted after its LMR was freed must be
 * looked at again).
 */
class FilledSgesTest {
    private static final LmrTriplet EMPTY = new LmrTriplet(null, 0, 0);

    @Test
    void lmr04_theSameImmutableListIsHeldUntilAnLmrIsFreed() {
        FilledSges filled = new FilledSges();
        List<LmrTriplet> one = List.of(EMPTY);
        filled.filled(one, 3, 64, false);
        assertTrue(filled.holds(one, 3));
        assertEquals(64, filled.total());
        assertFalse(filled.namedFreedLmr());
        assertFalse(filled.holds(one, 4), "an LMR was freed since the list was checked");
        assertFalse(filled.holds(List.of(EMPTY), 3), "an equal list is another list");

        List<LmrTriplet> three = List.of(EMPTY, EMPTY, EMPTY);
        filled.filled(three, 4, 0, true);
        assertTrue(filled.holds(three, 4));
        assertTrue(filled.namedFreedLmr());
        assertFalse(filled.holds(one, 4), "the array holds the last list filled only");
    }

    @Test
    void lmr04_listsThatCanChangeAreNeverHeld() {
        FilledSges filled = new FilledSges();
        List<List<LmrTriplet>> changeable = List.of(new ArrayList<>(List.of(EMPTY)), Arrays.asList(EMPTY),
                Collections.unmodifiableList(new ArrayList<>(List.of(EMPTY))));
        for (List<LmrTriplet> list : changeable) {
            filled.filled(list, 0, 0, false);
            assertFalse(filled.holds(list, 0), list.getClass().getName());
        }
    }

    @Test
    void lmr04_aListBeingWrittenIsNotHeld() {
        FilledSges filled = new FilledSges();
        List<LmrTriplet> one = List.of(EMPTY);
        filled.filled(one, 0, 0, false);
        filled.forget();
        assertFalse(filled.holds(one, 0));
    }
}
