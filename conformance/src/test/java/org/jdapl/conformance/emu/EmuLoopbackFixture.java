package org.jdapl.conformance.emu;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.emu.faults.EmuFaults;
import org.jdapl.provider.emu.EmuProvider;

/**
 * The emulated provider's loopback fabric under the kit: IAs of one {@link EmuProvider} in this
 * JVM, with the provider's test hooks for unreachable addresses, broken connections and held
 * transfers.
 */
public final class EmuLoopbackFixture implements ConformanceFixture {
    private final EmuProvider provider = new EmuProvider();
    private final AtomicInteger opened = new AtomicInteger();

    @Override
    public String name() {
        return "emu-loopback";
    }

    @Override
    public IaPair openPair() {
        return new IaPair(open(), open());
    }

    private InterfaceAdapter open() {
        String name = "emu-conformance-" + opened.incrementAndGet();
        return provider.open(new IaSpec(name, "loopback", "", true, "conformance"), 64);
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
