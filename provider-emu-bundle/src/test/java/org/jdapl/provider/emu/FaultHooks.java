package org.jdapl.provider.emu;

import java.net.SocketAddress;
import org.jdapl.provider.emu.loopback.LoopbackFabric;

import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.provider.emu.tcp.TcpConnection;

/**
 * The fault hooks' access to the provider's internals: a public class of the provider's private
 * package, so that {@link org.jdapl.provider.emu.faults.EmuFaults} (the exported face) can reach it.
 * It is built from the test sources into the {@code faults} jar, an OSGi fragment of the provider
 * bundle; the production bundle does not contain it.
 */
public final class FaultHooks {
    private FaultHooks() {
    }

    /**
     * An address in the loopback range (127.77.0.0/16) that no IA holds now: a connect to it yields
     * CONNECTION_EVENT_UNREACHABLE.
     */
    public static SocketAddress unassignedLoopbackAddress() {
        return LoopbackFabric.INSTANCE.unassignedAddress();
    }

    /**
     * Simulates a transport failure of {@code ep}'s connection: both ends get CONNECTION_EVENT_BROKEN,
     * their outstanding DTOs are flushed and both EPs are DISCONNECTED. Nothing happens if the EP is
     * not connected.
     *
     * @throws org.jdapl.dat.DatException INVALID_HANDLE for a freed EP or one of another provider
     */
    public static void breakConnection(Endpoint ep) {
        if (!(ep instanceof EmuEp emu)) {
            throw HandleType.EP.invalid("not an EP of the emulated provider");
        }
        emu.ia().locked(() -> {
            emu.checkLive();
            if (emu.connection().linkOpen()) {
                if (emu.connection().link() instanceof TcpConnection tcp) {
                    tcp.reset();
                } else {
                    emu.connection().breakLink();
                }
            }
        });
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
        if (!(ia instanceof EmuIa emu)) {
            throw HandleType.IA.invalid("not an IA of the emulated provider");
        }
        emu.setHeld(hold);
    }
}
