package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;

import org.jdapl.dat.MemPriv;

/** Memory a peer may name by an rmr_context: an LMR with remote privileges, or a bound RMR. */
public interface RemoteTarget {
    /**
     * The bytes {@code [address, address + length)} the context exposes, checked for the context's
     * liveness, protection zone and scope ({@code ep}), privilege and bounds.
     *
     * @return the slice, or null if the access is refused
     */
    MemorySegment resolve(EmuEp ep, long address, long length, MemPriv needed);

    /**
     * As {@link #resolve} without making a slice: the offset of {@code address} in {@link #backing()},
     * or -1 if the access is refused (domain lock held until the bytes are copied).
     */
    long locate(EmuEp ep, long address, long length, MemPriv needed);

    /** The whole segment {@link #locate} gives offsets in. */
    MemorySegment backing();
}
