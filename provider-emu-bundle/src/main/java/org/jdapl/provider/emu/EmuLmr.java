package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Set;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.VaType;

/**
 * An emulated Local Memory Region: a registered {@link MemorySegment}, heap or native. Its
 * rmr_context (when it grants a remote privilege) is a random 32-bit value checked on every remote
 * access. Freeing it unregisters it; the segment stays the consumer's.
 */
final class EmuLmr extends EmuObject implements LocalMemoryRegion, RemoteTarget {
    private final EmuIa ia;
    private final EmuPz pz;
    private final MemorySegment segment;
    private final Set<MemPriv> privileges;
    /** The same privileges for the checks on the data path. */
    private final java.util.EnumSet<MemPriv> granted = java.util.EnumSet.noneOf(MemPriv.class);
    private final VaType vaType;
    private final int lmrContext;
    private final int rmrContext;
    /** A thread that never runs: a segment it cannot access is confined to its owner thread. */
    private static final Thread PROBE = Thread.ofPlatform().unstarted(() -> { });
    private int boundRmrs;

    /**
     * {@code dat_lmr_create} of {@code region} (domain lock held): checks the arguments, takes an
     * lmr_context and, with a remote privilege, an rmr_context peers can name. Behaviours: OBJ_05.
     *
     * @throws DatException INVALID_PARAMETER for missing arguments, a thread-confined segment or write
     *         privileges on a read-only one; LENGTH_ERROR for 0 bytes (OBJ_05)
     */
    static EmuLmr register(EmuIa ia, EmuPz pz, MemorySegment region, Set<MemPriv> privileges, VaType vaType) {
        if (region == null || privileges == null || vaType == null) {
            throw DatException.invalidParameter(region == null ? 2 : privileges == null ? 3 : 4,
                    "region, privileges and VA type must be given");
        }
        if (region.byteSize() == 0) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "an LMR of 0 bytes");
        }
        if (!region.isAccessibleBy(PROBE)) {
            throw DatException.invalidParameter(2, "the segment is confined to one thread; register a segment "
                    + "of a shared, global or automatic arena, or a heap segment");
        }
        if (region.isReadOnly() && (privileges.contains(MemPriv.LOCAL_WRITE)
                || privileges.contains(MemPriv.REMOTE_WRITE) || privileges.contains(MemPriv.REMOTE_ATOMIC))) {
            throw DatException.invalidParameter(3, "write privileges on a read-only segment");
        }
        boolean remote = privileges.contains(MemPriv.REMOTE_READ) || privileges.contains(MemPriv.REMOTE_WRITE)
                || privileges.contains(MemPriv.REMOTE_ATOMIC);
        Contexts contexts = ia.contexts();
        int rmrContext = remote ? contexts.newRmrContext() : 0;
        EmuLmr lmr = new EmuLmr(ia, pz, region, privileges, vaType, contexts.newLmrContext(), rmrContext);
        if (remote) {
            contexts.register(rmrContext, lmr);
        }
        return lmr;
    }

    private EmuLmr(EmuIa ia, EmuPz pz, MemorySegment segment, Set<MemPriv> privileges, VaType vaType, int lmrContext,
           int rmrContext) {
        super(HandleType.LMR);
        this.ia = ia;
        this.pz = pz;
        this.segment = segment;
        this.privileges = Set.copyOf(privileges);
        this.granted.addAll(this.privileges);
        this.vaType = vaType;
        this.lmrContext = lmrContext;
        this.rmrContext = rmrContext;
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuPz pz() {
        return pz;
    }

    Set<MemPriv> privileges() {
        return privileges;
    }

    /** Whether the LMR was registered with {@code privilege}. */
    boolean grants(MemPriv privilege) {
        return granted.contains(privilege);
    }

    VaType vaType() {
        return vaType;
    }

    /** The address peers name the first byte by. */
    long registeredAddress() {
        return vaType == VaType.VA ? segment.address() : 0;
    }

    void addBinding() {
        boundRmrs++;
    }

    void removeBinding() {
        boundRmrs--;
    }

    @Override
    public LmrParam query() {
        checkLive();
        return new LmrParam(ia, pz, segment, segment.byteSize(), privileges, vaType, lmrContext, rmrContext,
                segment.byteSize(), registeredAddress());
    }

    /**
     * Behaviours: LMR_01, LMR_02, LMR_03: a bound RMR blocks free; the segment stays the consumer's; the
     * handle dies.
     */
    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            if (boundRmrs > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_LMR_IN_USE,
                        boundRmrs + " RMR(s) are bound to the LMR");
            }
            destroy();
            ia.forget(this);
        });
    }

    /** Unregisters the LMR (fabric lock held): its contexts stop naming memory at once. */
    void destroy() {
        markFreed();
        ia.contexts().unregister(rmrContext);
        ia.contexts().releaseLmrContext(lmrContext);
        pz.unuse();
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public MemorySegment resolve(EmuEp ep, long address, long length, MemPriv needed) {
        if (isFreed() || ep.pz() != pz || !granted.contains(needed) || !segment.scope().isAlive()) {
            return null;
        }
        return slice(segment, 0, segment.byteSize(), registeredAddress(), address, length);
    }

    /**
     * The part {@code [address, address + length)} of the window {@code [offset, offset + size)} of
     * {@code segment} whose first byte peers name {@code base}, or null if it is not inside.
     */
    static MemorySegment slice(MemorySegment segment, long offset, long size, long base, long address, long length) {
        long at = offsetOf(offset, size, base, address, length);
        return at < 0 ? null : segment.asSlice(at, length);
    }

    /** The offset in the segment of {@link #slice}'s part, or -1 if it is not inside. */
    static long offsetOf(long offset, long size, long base, long address, long length) {
        long rel = address - base;
        if (length < 0 || Long.compareUnsigned(rel, size) > 0 || length > size - rel) {
            return -1;
        }
        return offset + rel;
    }

    @Override
    public long locate(EmuEp ep, long address, long length, MemPriv needed) {
        if (isFreed() || ep.pz() != pz || !granted.contains(needed) || !segment.scope().isAlive()) {
            return -1;
        }
        return offsetOf(0, segment.byteSize(), registeredAddress(), address, length);
    }

    @Override
    public MemorySegment backing() {
        return segment;
    }

    /**
     * {@code dat_lmr_sync_rdma_read} and {@code _write}: memory of this JVM is coherent, so checking the
     * segments and a full fence is all a sync needs.
     */
    static void sync(EmuIa ia, List<LmrTriplet> segments) {
        ia.locked(() -> {
            ia.checkLive();
            if (segments == null) {
                throw DatException.invalidParameter(2, "no segments");
            }
            for (LmrTriplet t : segments) {
                if (t == null) {
                    throw DatException.invalidParameter(2, "a null segment");
                }
                if (t.length() == 0) {
                    continue;
                }
                EmuLmr lmr = ia.own(t.lmr(), EmuLmr.class, HandleType.LMR);
                long size = lmr.segment().byteSize();
                if (t.offset() > size || t.length() > size - t.offset()) {
                    throw DatException.invalidParameter(2, "segment outside its LMR");
                }
            }
        });
        VarHandle.fullFence();
    }
}
