package org.jdapl.provider.ofi.kit;

import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;

/** What the test JVM asks of the peer JVM of {@link OfiTwoJvmFixture} besides calls on DAT objects (RPC target 0). */
public final class OfiPeerControl {
    private final OfiProvider provider = new OfiProvider();

    /** Opens an ofi IA in the peer JVM. */
    public InterfaceAdapter open(String name, String iaParams) {
        return provider.open(new IaSpec(name, iaParams, "", true, "peer process"), 64);
    }

    /**
     * Closes every IA of the peer (their endpoints' shm regions go with them): the peer JVM halts when
     * its stdin closes, without running shutdown hooks.
     */
    public void close() {
        provider.deactivate();
    }

    /** The peer's process id. */
    public long pid() {
        return ProcessHandle.current().pid();
    }
}
