package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Byte patterns and comparisons of memory segments. */
public final class Bytes {
    private Bytes() {
    }

    /** Fills the segment with a pattern derived from {@code seed}, different at every offset. */
    public static void pattern(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (seed * 31 + i * 7 + (i >>> 8)));
        }
    }

    /** The segment's bytes. */
    public static byte[] snapshot(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    /** Fails unless the segment holds exactly {@code expected}, naming the first differing offset. */
    public static void same(byte[] expected, MemorySegment actual, String what) {
        same(expected, snapshot(actual), what);
    }

    /** Fails unless the arrays are equal, naming the first differing offset. */
    public static void same(byte[] expected, byte[] actual, String what) {
        if (expected.length != actual.length) {
            throw new AssertionError(what + ": " + actual.length + " bytes, expected " + expected.length);
        }
        for (int i = 0; i < expected.length; i++) {
            if (expected[i] != actual[i]) {
                throw new AssertionError(String.format("%s: byte %d is 0x%02x, expected 0x%02x", what, i,
                        actual[i] & 0xff, expected[i] & 0xff));
            }
        }
    }

    /** Fails unless every byte of the segment is {@code value}. */
    public static void all(MemorySegment s, byte value, String what) {
        long mismatch = s.mismatch(MemorySegment.ofArray(new byte[(int) s.byteSize()]).fill(value));
        if (mismatch >= 0) {
            throw new AssertionError(String.format("%s: byte %d is 0x%02x, expected 0x%02x", what, mismatch,
                    s.get(ValueLayout.JAVA_BYTE, mismatch) & 0xff, value & 0xff));
        }
    }
}
