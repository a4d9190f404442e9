package org.jdapl.tools;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Data patterns for validation: every 8-byte word depends on a seed and its position (little-endian on every host), so that lost,
 * stale, shifted or foreign data is found.
 */
public final class Patterns {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Patterns() {
    }

    private static long word(long seed, long index) {
        long x = (index + 1) * 0x9E3779B97F4A7C15L ^ seed * 0xC2B2AE3D27D4EB4FL;
        return x ^ (x >>> 29);
    }

    /** Fills {@code segment} with the pattern of {@code seed}. */
    public static void fill(MemorySegment segment, long seed) {
        long size = segment.byteSize();
        long words = size / 8;
        for (long i = 0; i < words; i++) {
            segment.set(WORD, i * 8, word(seed, i));
        }
        long last = word(seed, words);
        for (long b = words * 8; b < size; b++) {
            segment.set(ValueLayout.JAVA_BYTE, b, (byte) (last >>> (8 * (b - words * 8))));
        }
    }

    /** The offset of the first byte of {@code segment} that differs from the pattern of {@code seed}, or -1. */
    public static long mismatch(MemorySegment segment, long seed) {
        long size = segment.byteSize();
        long words = size / 8;
        for (long i = 0; i < words; i++) {
            if (segment.get(WORD, i * 8) != word(seed, i)) {
                for (long b = i * 8; b < i * 8 + 8; b++) {
                    if (segment.get(ValueLayout.JAVA_BYTE, b) != (byte) (word(seed, i) >>> (8 * (b - i * 8)))) {
                        return b;
                    }
                }
            }
        }
        long last = word(seed, words);
        for (long b = words * 8; b < size; b++) {
            if (segment.get(ValueLayout.JAVA_BYTE, b) != (byte) (last >>> (8 * (b - words * 8)))) {
                return b;
            }
        }
        return -1;
    }
}
