package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;

/**
 * The EPs a consumer creates ({@code dat_ep_create}, {@code dat_ep_create_with_srq}): the PZ, EVDs,
 * SRQ and attributes checked against the IA and the device under the IA's lock, then the EP with its
 * queue pair in INIT. The EPs a PSP creates are {@link ProviderEps}.
 */
final class ConsumerEps {
    private ConsumerEps() {
    }

    static OfaEp create(OfaIa ia, ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                        EventDispatcher connectEvd, OfaSrq srq, EpAttributes attributes) {
        EpAttributes attrs = attributes == null ? EpLimits.defaults(ia.device()) : EpLimits.withinRdmaLimit(ia.device(),
                attributes);
        return ia.locked(() -> {
            OfaPz p = ia.ownPz(pz, 2);
            OfaEvd recv = ia.ownEvd(recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV, EvdFlag.DTO);
            OfaEvd request = ia.ownEvd(requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST, EvdFlag.DTO);
            OfaEvd connect = ia.ownEvd(connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN, EvdFlag.CONNECTION);
            EpLimits.check(ia.device(), attrs);
            if (srq != null && srq.pz != p) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the SRQ is of another PZ");
            }
            OfaEp ep = new OfaEp(ia, p, recv, request, connect, srq, attrs, EpState.UNCONNECTED);
            ep.attachFirstQp();
            ia.objects().add(HandleType.EP, ep);
            return ep;
        });
    }
}
