package org.jdapl.provider.ofa.faults;

import org.jdapl.dat.Endpoint;
import org.jdapl.provider.ofa.FaultHooks;

/**
 * Test-only fault hooks of the OFA provider, for tests that need situations a healthy device never
 * produces. They ship in {@code jdapl-provider-ofa-<version>-faults.jar}: on a class path beside the
 * provider, or in OSGi as a fragment of {@code org.jdapl.provider.ofa} that exports this package.
 * The production bundle has none of them; applications must not use them.
 */
public final class OfaFaults {
    private OfaFaults() {
    }

    /**
     * Fails the transport under the connection of {@code ep} as a fatal QP error does (DISC_17):
     * the queue pair goes to the error state, this end gets CONNECTION_EVENT_BROKEN and the DREQ
     * tells the peer.
     *
     * @throws org.jdapl.dat.DatException INVALID_HANDLE if {@code ep} is not a live EP of this provider
     */
    public static void breakConnection(Endpoint ep) {
        FaultHooks.breakConnection(ep);
    }
}
