package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The copy of a small send's bytes into the EP's inline buffer (OBJ_07: data arrives byte for byte):
 * every size up to the inline limit, at every alignment, takes exactly the segment's bytes and writes
 * no byte outside its place; memory the consumer has released is not read.
 */
class InlineCopyTest {
    private static final byte UNTOUCHED = (byte) 0xA5;

    @Test
    void obj07_everySizeAndAlignmentCopiesExactlyItsBytes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment from = arena.allocate(OfaEp.INLINE_MAX + 16, 8);
            for (int i = 0; i < from.byteSize(); i++) {
                from.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            MemorySegment to = arena.allocate(OfaEp.INLINE_MAX + 16, 8);
            for (int length = 1; length <= OfaEp.INLINE_MAX; length++) {
                for (int fromOffset = 0; fromOffset < 9; fromOffset++) {
                    for (int toOffset = 0; toOffset < 9; toOffset++) {
                        to.fill(UNTOUCHED);
                        OfaEp.copySmall(from, fromOffset, to, toOffset, length);
                        for (int i = 0; i < to.byteSize(); i++) {
                            byte expected = i >= toOffset && i < toOffset + length
                                    ? from.get(ValueLayout.JAVA_BYTE, fromOffset + i - toOffset) : UNTOUCHED;
                            assertEquals(expected, to.get(ValueLayout.JAVA_BYTE, i), "length " + length
                                    + " from +" + fromOffset + " to +" + toOffset + ": byte " + i);
                        }
                    }
                }
            }
        }
    }

    @Test
    void obj07_theLastBytesOfASegmentAreReadWithinIt() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment to = arena.allocate(OfaEp.INLINE_MAX, 8);
            for (int length = 1; length <= OfaEp.INLINE_MAX; length++) {
                MemorySegment from = arena.allocate(length, 1).fill((byte) length);
                OfaEp.copySmall(from, 0, to, 0, length);
                assertEquals((byte) length, to.get(ValueLayout.JAVA_BYTE, length - 1));
            }
        }
    }

    @Test
    void obj07_releasedOrForeignMemoryIsNotRead() throws Exception {
        MemorySegment to = Arena.global().allocate(OfaEp.INLINE_MAX, 8);
        Arena closed = Arena.ofShared();
        MemorySegment gone = closed.allocate(16, 8);
        closed.close();
        assertThrows(IllegalStateException.class, () -> OfaEp.copySmall(gone, 0, to, 0, 2));
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment mine = confined.allocate(16, 8);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> CompletableFuture.runAsync(() -> OfaEp.copySmall(mine, 0, to, 0, 12)).get());
            assertEquals(WrongThreadException.class, e.getCause().getClass());
        }
    }
}
