package org.jdapl.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class PatternsTest {
    @Test
    void aFilledSegmentMatchesItsSeedOnlyAndEveryChangedByteIsFound() {
        try (Arena arena = Arena.ofConfined()) {
            for (int size : new int[] {1, 7, 8, 9, 4096, 4099}) {
                MemorySegment s = arena.allocate(size);
                Patterns.fill(s, 42);
                assertEquals(-1, Patterns.mismatch(s, 42));
                assertEquals(0, Patterns.mismatch(s, 43) == -1 ? 1 : 0, "another seed must not match (size " + size + ")");
                for (long at : new long[] {0, size / 2, size - 1}) {
                    byte old = s.get(ValueLayout.JAVA_BYTE, at);
                    s.set(ValueLayout.JAVA_BYTE, at, (byte) (old ^ 0x10));
                    assertEquals(at, Patterns.mismatch(s, 42));
                    s.set(ValueLayout.JAVA_BYTE, at, old);
                }
            }
        }
    }

    @Test
    void shiftedDataIsFound() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(8192);
            Patterns.fill(a, 7);
            MemorySegment b = arena.allocate(8192);
            MemorySegment.copy(a, 8, b, 0, 8192 - 8);
            assertEquals(0, Patterns.mismatch(b, 7));
        }
    }
}
