package org.jdapl.provider.ofa;

import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jdapl.dat.EpState;

/**
 * The service point states of one EP: the RSP that reserves it
 * (RESERVED), the request that arrived for it (PASSIVE_ and TENTATIVE_CONNECTION_PENDING), and what
 * becomes of both when the request is answered or the EP is freed. The state itself stays in the EP,
 * where the data path reads it; the reservation is given its getter and setter. Guarded by the EP's lock.
 *
 * <p>Behaviours: DISC_11, FREE_02, FREE_07.
 */
final class EpReservation {
    /** The EP's state, read and written where the EP keeps it. */
    private final Supplier<EpState> state;
    private final Consumer<EpState> setState;
    /** The reserved service point holding the EP, or null. */
    private OfaRsp rsp;
    /** The request the EP was reserved for (or created for), until it is answered. */
    private OfaCr pendingCr;

    EpReservation(Supplier<EpState> state, Consumer<EpState> setState) {
        this.state = state;
        this.setState = setState;
    }

    void checkReservable() {
        EpState s = state.get();
        if (s != EpState.UNCONNECTED) {
            throw s.invalid("dat_rsp_create");
        }
    }

    void reserve(OfaRsp r) {
        rsp = r;
        setState.accept(EpState.RESERVED);
    }

    boolean isReserved() {
        return state.get() == EpState.RESERVED;
    }

    /** {@code dat_rsp_free} before a request came: UNCONNECTED again. */
    void unreserve() {
        if (state.get() == EpState.RESERVED) {
            setState.accept(EpState.UNCONNECTED);
            rsp = null;
        }
    }

    /** A request arrived for the reserved (or provider-created) EP. */
    void requestArrived(OfaCr cr) {
        pendingCr = cr;
        rsp = null;
        if (state.get() == EpState.RESERVED) {
            setState.accept(EpState.PASSIVE_CONNECTION_PENDING);
        }
    }

    /** Its request was rejected or handed off: a reserved EP is UNCONNECTED again. */
    void requestReleased() {
        pendingCr = null;
        if (state.get() == EpState.PASSIVE_CONNECTION_PENDING) {
            setState.accept(EpState.UNCONNECTED);
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
