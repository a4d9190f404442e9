package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.VaType;

/**
 * An LMR: an {@code ibv_mr} over a native segment the consumer owns. The lmr_context is the lkey,
 * the rmr_context the rkey (0 without remote privileges). Freeing it deregisters the region and
 * leaves the segment alone.
 */
final class OfaLmr extends OfaHandle implements LocalMemoryRegion {
    final OfaIa ia;
    final OfaPz pz;
    final MemorySegment mr;
    private final MemorySegment segment;
    private final Set<MemPriv> privileges;
    private final VaType vaType;
    private final int lkey;
    private final int rkey;
    private final long registeredSize;
    /** RMRs bound to this LMR. */
    final java.util.concurrent.atomic.AtomicInteger boundRmrs = new java.util.concurrent.atomic.AtomicInteger();

    OfaLmr(OfaIa ia, OfaPz pz, MemorySegment mr, MemorySegment segment, Set<MemPriv> privileges, VaType vaType,
           int lkey, int rkey, long registeredSize) {
        super(HandleType.LMR);
        this.ia = ia;
        this.pz = pz;
        this.mr = mr;
        this.segment = segment;
        this.privileges = Set.copyOf(privileges);
        this.vaType = vaType;
        this.lkey = lkey;
        this.rkey = rkey;
        this.registeredSize = registeredSize;
    }

    @Override
    public LmrParam query() {
        live();
        return new LmrParam(ia, pz, segment, segment.byteSize(), privileges, vaType, lkey, remote() ? rkey : 0,
                registeredSize, vaType == VaType.ZB ? 0 : segment.address());
    }

    private boolean remote() {
        return privileges.contains(MemPriv.REMOTE_READ) || privileges.contains(MemPriv.REMOTE_WRITE);
    }

    @Override
    public void free() {
        ia.freeLmr(this);
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    /** The lkey, also after free (a DTO naming a freed LMR then fails with the device's protection error). */
    int lkey() {
        return lkey;
    }

    Set<MemPriv> privileges() {
        return privileges;
    }
}
