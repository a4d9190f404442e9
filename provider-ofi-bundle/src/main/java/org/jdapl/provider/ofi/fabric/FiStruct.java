package org.jdapl.provider.ofi.fabric;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A C struct of libfabric's headers as the binding uses it: its name, size and the members it reads
 * or writes, each with its offset and size (x86-64 Linux, {@code FI_VERSION(1,17)}). The layout probe
 * test compiles every one against the installed {@code rdma/fabric.h} and compares.
 */
public final class FiStruct {
    private final String name;
    private final long size;
    private final List<Field> fields = new ArrayList<>();

    FiStruct(String name, long size) {
        this.name = name;
        this.size = size;
    }

    /** A member: its name in C, offset and size in bytes. */
    public record Field(String member, long offset, int size) {
    }

    long field(String member, long offset, int memberSize) {
        fields.add(new Field(member, offset, memberSize));
        return offset;
    }

    /** The struct's tag, as in {@code struct <name>}. */
    public String name() {
        return name;
    }

    /** {@code sizeof(struct name)}. */
    public long size() {
        return size;
    }

    /** The members the binding uses. */
    public List<Field> fields() {
        return Collections.unmodifiableList(fields);
    }
}
