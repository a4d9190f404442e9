package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * A PZ: an {@code ibv_pd} ({@code ibv_alloc_pd}, {@code ibv_dealloc_pd}). It counts the EPs, LMRs,
 * RMRs and SRQs that use it, and cannot be freed while any does.
 *
 * <p>Behaviours: OBJ_02.
 */
final class OfaPz extends OfaHandle implements ProtectionZone, IaObjects.Owned {
    final OfaIa ia;
    final MemorySegment pd;
    /** EPs, LMRs, RMRs and SRQs of the PZ. Guarded by the IA lock. */
    int users;

    private OfaPz(OfaIa ia, MemorySegment pd) {
        super(HandleType.PZ);
        this.ia = ia;
        this.pd = pd;
    }

    /** {@code dat_pz_create} (IA lock held). */
    static OfaPz create(OfaIa ia) {
        MemorySegment pd;
        try {
            pd = Verbs.get().allocPd(ia.device().context.pointer());
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_PROTECTION_DOMAIN, "dat_pz_create", e);
        }
        OfaPz pz = new OfaPz(ia, pd);
        ia.objects().add(HandleType.PZ, pz);
        return pz;
    }

    @Override
    public PzParam query() {
        live();
        return new PzParam(ia);
    }

    /** {@code dat_pz_free}: INVALID_STATE_PZ_IN_USE while an EP, LMR, RMR or SRQ uses it. Behaviours: OBJ_02. */
    @Override
    public void free() {
        ia.free(this, () -> {
            if (users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_PZ_IN_USE,
                        "PZ is used by " + users + " EP(s), LMR(s), RMR(s) or SRQ(s)");
            }
        });
    }

    @Override
    public void destroy() {
        markFreed();
        ia.objects().remove(HandleType.PZ, this);
        NativeErrors.quietly("ibv_dealloc_pd", () -> Verbs.get().deallocPd(pd));
    }

    @Override
    public RemoteMemoryRegion createRmr() {
        return OfaRmr.create(this, RmrScope.PZ);
    }

    @Override
    public RemoteMemoryRegion createRmrForEp() {
        return OfaRmr.create(this, RmrScope.EP);
    }
}
