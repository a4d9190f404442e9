package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;

/** A PZ: an {@code ibv_pd}. It counts the EPs, LMRs and RMRs that use it. */
final class OfaPz extends OfaHandle implements ProtectionZone {
    final OfaIa ia;
    final MemorySegment pd;
    /** EPs, LMRs and RMRs of the PZ. Guarded by the IA lock. */
    int users;

    OfaPz(OfaIa ia, MemorySegment pd) {
        super(HandleType.PZ);
        this.ia = ia;
        this.pd = pd;
    }

    @Override
    public PzParam query() {
        live();
        return new PzParam(ia);
    }

    @Override
    public void free() {
        ia.freePz(this);
    }

    @Override
    public RemoteMemoryRegion createRmr() {
        return ia.createRmr(this, RmrScope.PZ);
    }

    @Override
    public RemoteMemoryRegion createRmrForEp() {
        return ia.createRmr(this, RmrScope.EP);
    }
}
