package org.jdapl.provider.ofa;

import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ProtectionZone;

/**
 * The EPs a PSP with {@code PspFlag.PROVIDER} creates, as OFED's cma provider does: one per arriving
 * request, without a PZ or a queue pair, in TENTATIVE_CONNECTION_PENDING ({@link #create});
 * {@code dat_ep_modify} gives it a PZ, EVDs and attributes ({@link #configured}); accepting its
 * request creates the queue pair on them ({@link #attachForAccept}); rejecting or handing off the
 * request frees it ({@link #requestReleased}). Disconnect and free fail INVALID_STATE while it is
 * tentative; after the reject it is freed.
 *
 * <p>Behaviours: DISC_11, FREE_02, FREE_07.
 */
final class ProviderEps {
    private ProviderEps() {
    }

    /**
     * The EP for a request arriving at a PROVIDER PSP (event thread): the PSP's EVD as connect EVD if
     * it has the CONNECTION stream; null if the IA is closing.
     */
    static OfaEp create(OfaIa ia, OfaEvd connectEvd) {
        ia.lock().lock();
        try {
            if (ia.isFreed()) {
                return null;
            }
            OfaEp ep = new OfaEp(ia, null, null, null, connectEvd, null, EpLimits.defaults(ia.device()),
                    EpState.TENTATIVE_CONNECTION_PENDING);
            if (connectEvd != null) {
                connectEvd.users++;
            }
            ia.objects().add(HandleType.EP, ep);
            return ep;
        } finally {
            ia.lock().unlock();
        }
    }

    /**
     * {@code dat_ep_modify} of a tentative EP of {@code ia} made on {@code b}: the binding with its new PZ,
     * EVDs and attributes (IA and EP lock held).
     */
    static EpBinding configured(OfaIa ia, EpBinding b, ProtectionZone newPz, EpAttributes attrs,
                                EventDispatcher recv, EventDispatcher request, EventDispatcher connect) {
        OfaPz p = newPz == null ? b.pz() : ia.ownPz(newPz, 1);
        OfaEvd r = recv == null ? b.recvEvd()
                : ia.ownEvd(recv, DatReturnSubtype.INVALID_HANDLE_EVD_RECV, EvdFlag.DTO);
        OfaEvd q = request == null ? b.requestEvd()
                : ia.ownEvd(request, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST, EvdFlag.DTO);
        OfaEvd c = connect == null ? b.connectEvd()
                : ia.ownEvd(connect, DatReturnSubtype.INVALID_HANDLE_EVD_CONN, EvdFlag.CONNECTION);
        EpAttributes a = attrs == null ? b.attributes() : EpLimits.withinRdmaLimit(ia.device(), attrs);
        EpLimits.check(ia.device(), a);
        return b.replaced(p, r, q, c, a);
    }

    /**
     * Before {@code dat_cr_accept} of a tentative EP's request: the queue pair is created on the PZ and
     * EVDs the consumer gave it; without a PZ or a connect EVD the accept fails INVALID_PARAMETER.
     */
    static void attachForAccept(OfaEp ep) {
        OfaIa ia = ep.ia;
        ia.lock().lock();
        try {
            ep.lock.lock();
            try {
                ep.live();
                if (ep.state == EpState.TENTATIVE_CONNECTION_PENDING) {
                    ep.attachForAccept("dat_cr_accept");
                }
            } finally {
                ep.lock.unlock();
            }
        } finally {
            ia.lock().unlock();
        }
    }

    /** The request of a reserved or provider-created EP was rejected or handed off. */
    static void requestReleased(OfaEp ep, OfaCr cr) {
        OfaIa ia = ep.ia;
        ia.lock().lock();
        try {
            if (ep.isFreed()) {
                return;
            }
            if (ep.state == EpState.TENTATIVE_CONNECTION_PENDING) {
                ep.destroy(); // a provider-created EP goes with its request (FREE_07)
                return;
            }
            ep.lock.lock();
            try {
                EpReservation reservation = ep.reservation();
                if (reservation.pendingCr() == cr) {
                    reservation.requestReleased();
                }
            } finally {
                ep.lock.unlock();
            }
        } finally {
            ia.lock().unlock();
        }
    }
}
