package org.jdapl.provider.ofa;

import org.jdapl.dat.EpState;

/**
 * The service point states of one EP: the RSP that reserves it
 * (RESERVED), the request that arrived for it (PASSIVE_ and TENTATIVE_CONNECTION_PENDING), and what
 * becomes of both when the request is answered or the EP is freed. The state itself stays in the EP
 * ({@link OfaEp#state}). Guarded by the EP's lock.
 *
 * <p>Behaviours: DISC_11, FREE_02, FREE_07.
 */
final class EpReservation {
    private final OfaEp ep;
    /** The reserved service point holding the EP, or null. */
    private OfaRsp rsp;
    /** The request the EP was reserved for (or created for), until it is answered. */
    private OfaCr pendingCr;

    EpReservation(OfaEp ep) {
        this.ep = ep;
    }

    void checkReservable() {
        if (ep.state != EpState.UNCONNECTED) {
            throw ep.state.invalid("dat_rsp_create");
        }
    }

    void reserve(OfaRsp r) {
        rsp = r;
        ep.state = EpState.RESERVED;
    }

    boolean isReserved() {
        return ep.state == EpState.RESERVED;
    }

    /** {@code dat_rsp_free} before a request came: UNCONNECTED again. */
    void unreserve() {
        if (ep.state == EpState.RESERVED) {
            ep.state = EpState.UNCONNECTED;
            rsp = null;
        }
    }

    /** A request arrived for the reserved (or provider-created) EP. */
    void requestArrived(OfaCr cr) {
        pendingCr = cr;
        rsp = null;
        if (ep.state == EpState.RESERVED) {
            ep.state = EpState.PASSIVE_CONNECTION_PENDING;
        }
    }

    /** Its request was rejected or handed off: a reserved EP is UNCONNECTED again. */
    void requestReleased() {
        pendingCr = null;
        if (ep.state == EpState.PASSIVE_CONNECTION_PENDING) {
            ep.state = EpState.UNCONNECTED;
        }
    }

    /** Its request was accepted: the connection goes on without it. */
    void requestAccepted() {
        pendingCr = null;
    }

    OfaCr pendingCr() {
        return pendingCr;
    }

    /**
     * At {@code dat_ep_free}: the RSP that still holds the EP goes, and so does its unanswered request.
     *
     * <p>Behaviours: FREE_02.
     */
    void release() {
        if (rsp != null && !rsp.isFreed()) {
            rsp.destroy();
        }
        if (pendingCr != null) {
            pendingCr.consume();
        }
    }
}
