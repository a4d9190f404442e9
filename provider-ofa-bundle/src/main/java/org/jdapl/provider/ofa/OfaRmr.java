package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.VaType;

/**
 * An RMR: an {@code ibv_mw}, type 1 for PZ scope ({@code dat_rmr_create}) and type 2 for EP scope
 * ({@code dat_rmr_create_for_ep}). A bind is a work request on a connected EP's queue pair.
 */
final class OfaRmr extends OfaHandle implements RemoteMemoryRegion {
    final OfaIa ia;
    final OfaPz pz;
    final MemorySegment mw;
    final RmrScope scope;
    /** The LMR it is bound to, or null. Guarded by the IA lock. */
    OfaLmr boundLmr;
    long boundOffset;
    long boundLength;
    Set<MemPriv> boundPrivileges = Set.of();
    int rmrContext;
    VaType vaType = VaType.VA;
    /** The window's current rkey (type 2 windows: the one of the last bind). Guarded by the EP's lock. */
    int windowKey;

    OfaRmr(OfaIa ia, OfaPz pz, MemorySegment mw, RmrScope scope) {
        super(HandleType.RMR);
        this.ia = ia;
        this.pz = pz;
        this.mw = mw;
        this.scope = scope;
        this.windowKey = org.jdapl.provider.ofa.verbs.Structs.IbvMw.RKEY.getInt(mw);
    }

    @Override
    public RmrParam query() {
        live();
        synchronized (this) {
            return new RmrParam(ia, pz, boundLmr, boundOffset, boundLength, boundPrivileges, rmrContext, scope,
                    vaType);
        }
    }

    @Override
    public int bind(LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges, VaType va,
                    Endpoint ep, long cookie, Set<CompletionFlag> flags) {
        return ia.bindRmr(this, lmr, offset, length, privileges, va, ep, cookie, flags);
    }

    @Override
    public void free() {
        ia.freeRmr(this);
    }
}
