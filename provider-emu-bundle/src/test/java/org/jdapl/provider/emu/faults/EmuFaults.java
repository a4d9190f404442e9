package org.jdapl.provider.emu.faults;

import java.net.SocketAddress;

import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.provider.emu.FaultHooks;

/**
 * Test-only fault hooks of the emulated provider, for conformance tests that need situations a
 * healthy fabric never produces. They ship in {@code jdapl-provider-emu-<version>-faults.jar}: on a
 * class path beside the provider, or in OSGi as a fragment of {@code org.jdapl.provider.emu} that
 * exports this package. The production bundle has none of them; applications must not use them.
 */
public final class EmuFaults {
    private EmuFaults() {
    }

    /**
     * An address in the loopback range (127.77.0.0/16) that no IA holds now: a connect to it yields
     * CONNECTION_EVENT_UNREACHABLE (CONN_06).
     */
    public static SocketAddress unassignedLoopbackAddress() {
        return FaultHooks.unassignedLoopbackAddress();
    }

    /**
     * Simulates a transport failure of {@code ep}'s connection (DISC_17): both ends get
     * CONNECTION_EVENT_BROKEN, their outstanding DTOs are flushed and both EPs are DISCONNECTED.
     * Nothing happens if the EP is not connected.
     *
     * @throws org.jdapl.dat.DatException INVALID_HANDLE for a freed EP or one of another provider
     */
    public static void breakConnection(Endpoint ep) {
        FaultHooks.breakConnection(ep);
    }

    /**
     * Holds ({@code hold} true) or releases the data movement of every EP of {@code ia}: while held,
     * DTOs posted on its EPs (and peers' DTOs towards them) stay in progress, no byte moves and
     * nothing completes. Releasing resumes them in order. Disconnect, free and a broken connection
     * still complete every held DTO exactly once (flushed).
     *
     * @throws org.jdapl.dat.DatException INVALID_HANDLE for a closed IA or one of another provider
     */
    public static void holdTransfers(InterfaceAdapter ia, boolean hold) {
        FaultHooks.holdTransfers(ia, hold);
    }
}
