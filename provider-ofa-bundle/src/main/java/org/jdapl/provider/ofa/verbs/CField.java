package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One member of a {@link CStruct}: its offset and how it is read and written. Reads and writes are
 * unaligned, so that a member at any offset of any segment works.
 *
 * @param struct the struct it belongs to
 * @param member the member designator ({@code offsetof} syntax)
 * @param offset the offset in bytes
 * @param kind the C type class
 */
public record CField(CStruct struct, String member, long offset, Kind kind) {
    /** The C types the bindings read. */
    public enum Kind {
        /** {@code uint8_t}. */
        U8(1),
        /** {@code uint16_t}. */
        U16(2),
        /** {@code int}, {@code uint32_t}, an enum. */
        I32(4),
        /** {@code uint64_t}, {@code size_t}. */
        I64(8),
        /** A pointer. */
        POINTER(8),
        /** An embedded array or struct; accessed with {@link #slice}. */
        BYTES(0);

        private final int size;

        Kind(int size) {
            this.size = size;
        }

        /** The size in bytes (0 for BYTES). */
        public int size() {
            return size;
        }
    }

    /** Reads an unsigned byte. */
    public int getU8(MemorySegment s) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, offset));
    }

    /** Reads an unsigned 16-bit value. */
    public int getU16(MemorySegment s) {
        return Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset));
    }

    /** Reads a 32-bit value. */
    public int getInt(MemorySegment s) {
        return s.get(ValueLayout.JAVA_INT_UNALIGNED, offset);
    }

    /** Reads a 64-bit value. */
    public long getLong(MemorySegment s) {
        return s.get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
    }

    /** Reads a pointer (as a zero-length segment). */
    public MemorySegment getPointer(MemorySegment s) {
        return MemorySegment.ofAddress(s.get(ValueLayout.JAVA_LONG_UNALIGNED, offset));
    }

    /** Writes a byte. */
    public void setU8(MemorySegment s, int value) {
        s.set(ValueLayout.JAVA_BYTE, offset, (byte) value);
    }

    /** Writes a 64-bit value. */
    public void setLong(MemorySegment s, long value) {
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, offset, value);
    }

    /** Writes a 16-bit value. */
    public void setU16(MemorySegment s, int value) {
        s.set(ValueLayout.JAVA_SHORT_UNALIGNED, offset, (short) value);
    }

    /** Writes a 32-bit value. */
    public void setInt(MemorySegment s, int value) {
        s.set(ValueLayout.JAVA_INT_UNALIGNED, offset, value);
    }

    /** Writes a pointer. */
    public void setPointer(MemorySegment s, MemorySegment value) {
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, offset, value.address());
    }

    /** The bytes of an embedded member. */
    public MemorySegment slice(MemorySegment s, long length) {
        return s.asSlice(offset, length);
    }
}
