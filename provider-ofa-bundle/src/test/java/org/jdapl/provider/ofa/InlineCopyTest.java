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
 * every size up to the inline limit, at every alignment, takes exactly the segment's bytes, writes
 * nothing before its place and at most {@link SendQueue#INLINE_SLACK} bytes after it (within the
 * buffer's slack, which the gather list does not name); memory the consumer has released is not read.
 */
class InlineCopyTest {
    private static final byte UNTOUCHED = (byte) 0xA5;

    @Test
    void obj07_everySizeAndAlignmentCopiesExactlyItsBytes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment from = arena.allocate(SendQueue.INLINE_MAX + 16, 8);
            for (int i = 0; i < from.byteSize(); i++) {
                from.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            MemorySegment to = arena.allocate(SendQueue.INLINE_MAX + 16, 8);
            for (int length = 1; length <= SendQueue.INLINE_MAX; length++) {
                for (int fromOffset = 0; fromOffset < 9; fromOffset++) {
                    for (int toOffset = 0; toOffset < 9; toOffset++) {
                        to.fill(UNTOUCHED);
                        SendQueue.copySmall(from, fromOffset, to.address() + toOffset, length);
                        int written = (length + Long.BYTES - 1) / Long.BYTES * Long.BYTES;
                        for (int i = 0; i < to.byteSize(); i++) {
                            String where = "length " + length + " from +" + fromOffset + " to +" + toOffset
                                    + ": byte " + i;
                            if (i >= toOffset && i < toOffset + length) {
                                assertEquals(from.get(ValueLayout.JAVA_BYTE, fromOffset + i - toOffset),
                                        to.get(ValueLayout.JAVA_BYTE, i), where);
                            } else if (i < toOffset || i >= toOffset + written) {
                                assertEquals(UNTOUCHED, to.get(ValueLayout.JAVA_BYTE, i), where);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void obj07_theLastBytesOfASegmentAreReadWithinIt() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment to = arena.allocate(SendQueue.INLINE_MAX + SendQueue.INLINE_SLACK, 8);
            for (int length = 1; length <= SendQueue.INLINE_MAX; length++) {
                for (int offset = 0; offset < 8; offset++) {
                    // The segment ends with the copied bytes, so the last few cannot be loaded eight at once.
                    MemorySegment from = arena.allocate(offset + length, 1);
                    for (int i = 0; i < from.byteSize(); i++) {
                        from.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + length));
                    }
                    to.fill(UNTOUCHED);
                    SendQueue.copySmall(from, offset, to.address(), length);
                    for (int i = 0; i < length; i++) {
                        assertEquals(from.get(ValueLayout.JAVA_BYTE, offset + i), to.get(ValueLayout.JAVA_BYTE, i),
                                "length " + length + " from +" + offset + ": byte " + i);
                    }
                }
            }
        }
    }

    @Test
    void obj07_releasedOrForeignMemoryIsNotRead() throws Exception {
        MemorySegment to = Arena.global().allocate(SendQueue.INLINE_MAX, 8);
        Arena closed = Arena.ofShared();
        MemorySegment gone = closed.allocate(16, 8);
        closed.close();
        assertThrows(IllegalStateException.class, () -> SendQueue.copySmall(gone, 0, to.address(), 2));
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment mine = confined.allocate(16, 8);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> CompletableFuture.runAsync(() -> SendQueue.copySmall(mine, 0, to.address(), 12)).get());
            assertEquals(WrongThreadException.class, e.getCause().getClass());
        }
    }
}
