package org.jdapl.provider.ofa;

import java.lang.foreign.ValueLayout;

import static org.jdapl.provider.ofa.verbs.CStruct.ADDRESS_SPACE;

/**
 * Reads and writes of the provider's own data-path buffers (work requests, gather entries, work
 * completions) by address. Through one constant segment that spans the address space, an access is
 * a compare with a constant and the load or store: through a buffer's own segment, each access
 * also loads that segment's fields (bounds, session, base), and a compiled post or poll keeps those
 * in stack slots around its downcall. Only for memory that the provider allocated and frees under
 * the lock of its owner, after its last access.
 */
final class DataPathMemory {
    private DataPathMemory() {
    }

    static long getLong(long address) {
        return ADDRESS_SPACE.get(ValueLayout.JAVA_LONG_UNALIGNED, address);
    }

    static int getInt(long address) {
        return ADDRESS_SPACE.get(ValueLayout.JAVA_INT_UNALIGNED, address);
    }

    static void putLong(long address, long value) {
        ADDRESS_SPACE.set(ValueLayout.JAVA_LONG_UNALIGNED, address, value);
    }

    static void putByte(long address, byte value) {
        ADDRESS_SPACE.set(ValueLayout.JAVA_BYTE, address, value);
    }

    static void putInt(long address, int value) {
        ADDRESS_SPACE.set(ValueLayout.JAVA_INT_UNALIGNED, address, value);
    }
}
