package org.jdapl.itest;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.provider.emu.faults.EmuFaults;

/**
 * The emulated provider under the conformance kit as an OSGi consumer sees it: IAs opened by name
 * ({@code emu0}, the provider's default IA) through the {@link DatRegistry} service. The cases that
 * need a situation a healthy fabric never produces use the provider's test-only fault hooks
 * ({@link EmuFaults}), installed as a fragment of the provider bundle that exports their package;
 * the production bundle has none.
 */
final class OsgiEmuFixture implements ConformanceFixture {
    private final DatRegistry registry;
    private final String iaName;

    OsgiEmuFixture(DatRegistry registry, DatProvider emu, String iaName) {
        this.registry = registry;
        this.iaName = iaName;
        if (!emu.name().equals("emu")) {
            throw new IllegalArgumentException("not the emulated provider: " + emu.name());
        }
    }

    @Override
    public String name() {
        return "emu-osgi";
    }

    @Override
    public IaPair openPair() {
        InterfaceAdapter first = registry.open(iaName, 64);
        try {
            return new IaPair(first, registry.open(iaName, 64));
        } catch (RuntimeException e) {
            first.close();
            throw e;
        }
    }

    @Override
    public SocketAddress unreachableAddress() {
        return EmuFaults.unassignedLoopbackAddress();
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        try {
            return List.of(UnixDomainSocketAddress.of("x"), InetSocketAddress.createUnresolved("nowhere.invalid", 0),
                    new InetSocketAddress(InetAddress.getByName("239.1.2.3"), 0));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("a literal multicast address did not parse", e);
        }
    }

    @Override
    public void breakTransport(Endpoint ep) {
        EmuFaults.breakConnection(ep);
    }

    @Override
    public boolean canHoldTransfers() {
        return true;
    }

    @Override
    public void holdTransfers(InterfaceAdapter ia, boolean hold) {
        EmuFaults.holdTransfers(ia, hold);
    }
}
