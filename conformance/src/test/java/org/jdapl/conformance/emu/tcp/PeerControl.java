package org.jdapl.conformance.emu.tcp;

import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.emu.faults.EmuFaults;
import org.jdapl.provider.emu.EmuProvider;

/** What the test JVM asks of the peer JVM besides calls on DAT objects (RPC target 0). */
public final class PeerControl {
    private final EmuProvider provider = new EmuProvider();

    /** Opens an emulated IA in the peer. */
    public InterfaceAdapter open(String name, String iaParams) {
        return provider.open(new IaSpec(name, iaParams, "", true, "peer process"), 64);
    }

    /** {@link EmuFaults#holdTransfers} in the peer. */
    public void hold(InterfaceAdapter ia, boolean hold) {
        EmuFaults.holdTransfers(ia, hold);
    }

    /** {@link EmuFaults#breakConnection} in the peer. */
    public void breakConnection(Endpoint ep) {
        EmuFaults.breakConnection(ep);
    }

    /** The peer's process id. */
    public long pid() {
        return ProcessHandle.current().pid();
    }

    /** Live objects of the peer's provider, by kind. */
    public String openObjects() {
        return provider.openObjects().toString();
    }
}
