package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Reads and writes of the provider's own data-path buffers (work requests, gather entries, work
 * completions) by address. Through one constant segment that spans the address space, an access is
 * a compare with a constant and the load or store: through a buffer's own segment, each access
 * also loads that segment's fields (bounds, session, base), and a compiled post or poll keeps those
 * in stack slots around its downcall. Only for memory that the provider allocated and frees under
 * the lock of its owner, after its last access.
 */
final class DataPathMemory {
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE_SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private DataPathMemory() {
    }

    static long getLong(long address) {
        return ALL.get(ValueLayout.JAVA_LONG_UNALIGNED, address);
    }

    static int getInt(long address) {
        return ALL.get(ValueLayout.JAVA_INT_UNALIGNED, address);
    }

    static void putLong(long address, long value) {
        ALL.set(ValueLayout.JAVA_LONG_UNALIGNED, address, value);
    }

    /**
     * Writes the {@code n} (1 to 7) lowest bytes of {@code bytes} to {@code address}, the lowest
     * first: at most three stores, without a loop.
     */
    static void putLowBytes(long address, long bytes, int n) {
        long at = address;
        long rest = bytes;
        if ((n & 4) != 0) {
            ALL.set(LE_INT, at, (int) rest);
            at += Integer.BYTES;
            rest >>>= Integer.SIZE;
        }
        if ((n & 2) != 0) {
            ALL.set(LE_SHORT, at, (short) rest);
            at += Short.BYTES;
            rest >>>= Short.SIZE;
        }
        if ((n & 1) != 0) {
            ALL.set(ValueLayout.JAVA_BYTE, at, (byte) rest);
        }
    }

    static void putInt(long address, int value) {
        ALL.set(ValueLayout.JAVA_INT_UNALIGNED, address, value);
    }
}
