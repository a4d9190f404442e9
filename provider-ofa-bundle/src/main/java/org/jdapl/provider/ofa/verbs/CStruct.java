package org.jdapl.provider.ofa.verbs;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A C struct as the Java side sees it: its name in the headers, its size and the members the
 * bindings read or write, each with its offset. The numbers are those of rdma-core 44 on x86-64
 * (LP64); {@code StructLayoutProbeTest} compiles a C probe against the installed headers and checks
 * every one of them.
 */
public final class CStruct {
    private final String name;
    private final long size;
    private final List<CField> fields = new ArrayList<>();

    /**
     * A struct.
     *
     * @param name the C name after {@code struct}, e.g. {@code ibv_mr}
     * @param size {@code sizeof(struct name)}
     */
    public CStruct(String name, long size) {
        this.name = name;
        this.size = size;
    }

    /** The C name after {@code struct}. */
    public String name() {
        return name;
    }

    /** {@code sizeof}. */
    public long size() {
        return size;
    }

    /** The members declared so far. */
    public List<CField> fields() {
        return Collections.unmodifiableList(fields);
    }

    /**
     * Declares a member.
     *
     * @param member the member designator as {@code offsetof} takes it (may be a path, e.g.
     *        {@code route.addr.src_addr})
     * @param offset its offset in bytes
     * @param kind how it is read
     */
    public CField field(String member, long offset, CField.Kind kind) {
        CField f = new CField(this, member, offset, kind);
        fields.add(f);
        return f;
    }

    /**
     * The whole address space as one segment, of which {@link #view} and {@link #bytesAt} take slices
     * (a slice is a bounds check and a new segment, where {@code MemorySegment.reinterpret}, a restricted
     * method, finds its caller by walking the stack on every call: the rdma_cm event of each connection
     * step is read so) and through which the data path reads and writes its own buffers by address.
     * Only for memory C or the provider owns and keeps alive across the access.
     */
    public static final MemorySegment ADDRESS_SPACE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    /** The struct at a native address (memory C owns), as a segment of {@link #size()} bytes. */
    public MemorySegment view(MemorySegment address) {
        return ADDRESS_SPACE.asSlice(address.address(), size);
    }

    /** {@code length} bytes at a native address (memory C owns). */
    public static MemorySegment bytesAt(long address, long length) {
        return ADDRESS_SPACE.asSlice(address, length);
    }

    @Override
    public String toString() {
        return "struct " + name;
    }
}
