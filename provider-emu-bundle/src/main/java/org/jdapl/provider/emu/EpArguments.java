package org.jdapl.provider.emu;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;

/**
 * The PZ, EVDs and attributes an EP is made on, as {@code dat_ep_create} and {@code dat_ep_modify}
 * give them: each handle a live object of the IA, the EVDs with the streams their role needs
 * ({@link EmuEvd#checkStreams}), the EP's SRQ of the same PZ, the attributes within the IA's limits.
 * Used under the IA's domain lock.
 */
record EpArguments(EmuPz pz, EmuEvd recv, EmuEvd request, EmuEvd connect, EpAttributes attributes) {

    /**
     * The arguments checked; {@code now} is what a modified EP has (a null argument keeps it), null at
     * create (a null EVD is none, null attributes the defaults).
     */
    static EpArguments resolve(EmuIa ia, EpArguments now, ProtectionZone pz, EventDispatcher recv,
                               EventDispatcher request, EventDispatcher connect, EmuSrq srq, EpAttributes attributes) {
        EmuPz p = pz == null && now != null ? now.pz : ia.own(pz, EmuPz.class, HandleType.PZ);
        EmuEvd r = evd(ia, recv, now == null ? null : now.recv, DatReturnSubtype.INVALID_HANDLE_EVD_RECV);
        EmuEvd q = evd(ia, request, now == null ? null : now.request, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST);
        EmuEvd c = evd(ia, connect, now == null ? null : now.connect, DatReturnSubtype.INVALID_HANDLE_EVD_CONN);
        EmuEvd.checkStreams(r, q, c);
        if (srq != null && srq.pz() != p) {
            throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the EP's SRQ belongs to another PZ");
        }
        EpAttributes a = attributes == null && now != null ? now.attributes
                : EmuLimits.checkEpAttributes(attributes == null ? EpAttributes.defaults() : attributes, srq != null);
        return new EpArguments(p, r, q, c, a);
    }

    private static EmuEvd evd(EmuIa ia, EventDispatcher given, EmuEvd kept, DatReturnSubtype subtype) {
        return given == null ? kept : ia.ownEvd(given, subtype);
    }
}
