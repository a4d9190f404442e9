package org.jdapl.provider.emu;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;

/** An emulated Protection Zone: counts the EPs, LMRs, RMRs and SRQs that use it. */
final class EmuPz extends EmuObject implements ProtectionZone {
    private final EmuIa ia;
    private int users;

    EmuPz(EmuIa ia) {
        super(HandleType.PZ);
        this.ia = ia;
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    void use() {
        users++;
    }

    void unuse() {
        users--;
    }

    @Override
    public PzParam query() {
        checkLive();
        return new PzParam(ia);
    }

    /** Behaviours: OBJ_02: a PZ in use by an EP, LMR or RMR cannot be freed. */
    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            if (users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_PZ_IN_USE,
                        "the PZ is used by " + users + " EP(s), LMR(s), RMR(s) or SRQ(s)");
            }
            markFreed();
            ia.forget(this);
        });
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
