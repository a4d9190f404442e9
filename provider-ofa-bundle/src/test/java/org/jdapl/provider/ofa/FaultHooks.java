package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.Endpoint;

/**
 * The fault hooks' access to the provider's internals: a public class of the provider's private
 * package, so that {@link org.jdapl.provider.ofa.faults.OfaFaults} (the exported face) can reach it.
 * It is built from the test sources into the {@code faults} jar, an OSGi fragment of the provider
 * bundle; the production bundle does not contain it.
 */
public final class FaultHooks {
    private FaultHooks() {
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
