package org.jdapl.provider.ofi;

import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;

/**
 * A PZ. libfabric has no protection domain below the domain (the IA's), so the PZ is a scope of
 * jdapl's own: an EP posts only with LMRs of its PZ (checked at the post), and RMRs and LMRs count
 * as its users.
 *
 * <p>Behaviours: OBJ_02.
 */
final class OfiPz extends OfiObject implements ProtectionZone {
    final AtomicInteger users = new AtomicInteger();

    OfiPz(OfiIa ia) {
        super(ia, HandleType.PZ);
        ia.added(this);
    }

    static OfiPz of(OfiIa ia, ProtectionZone pz, int arg) {
        if (!(pz instanceof OfiPz p) || p.ia != ia || p.freed) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_PZ, "not a live PZ of this IA");
        }
        return p;
    }

    @Override
    public PzParam query() {
        live();
        return new PzParam(ia);
    }

    @Override
    public void free() {
        live();
        if (users.get() > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_PZ_IN_USE, users.get() + " objects use the PZ");
        }
        freed = true;
        ia.removed(this);
    }

    @Override
    void destroy() {
        freed = true;
    }

    @Override
    public RemoteMemoryRegion createRmr() {
        live();
        return new OfiRmr(this, RmrScope.PZ);
    }

    @Override
    public RemoteMemoryRegion createRmrForEp() {
        live();
        return new OfiRmr(this, RmrScope.EP);
    }
}
