package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.Endpoint;

/**
 * Fault hooks for tests of the OFA provider (the package is not exported from the bundle).
 */
public final class OfaFaults {
    private OfaFaults() {
    }

    /**
     * Fails the transport under the connection of {@code ep} as a fatal QP error does: the queue pair
     * goes to the error state and the provider handles it as IBV_EVENT_QP_FATAL (BROKEN at this end,
     * the DREQ tells the peer).
     *
     * @throws DatException INVALID_HANDLE if {@code ep} is not a live EP of this provider
     */
    public static void breakConnection(Endpoint ep) {
        if (!(ep instanceof OfaEp e) || e.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "not a live EP of the ofa provider");
        }
        e.connection().broken("IBV_EVENT_QP_FATAL (injected)");
    }
}
