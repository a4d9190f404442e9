package org.jdapl.provider.ofi.kit;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Timing;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;

/**
 * The ofi provider under the kit: two IAs on libfabric's tcp provider, domain {@code lo}, in this JVM
 * ({@code ofi-tcp}).
 */
public final class OfiTcpFixture implements ConformanceFixture {
    private final OfiProvider provider = new OfiProvider();
    private final AtomicInteger opened = new AtomicInteger();

    @Override
    public String name() {
        return "ofi-tcp";
    }

    @Override
    public IaPair openPair() {
        return new IaPair(open(), open());
    }

    private InterfaceAdapter open() {
        return provider.open(new IaSpec("ofi-v2-tcp-lo-" + opened.incrementAndGet(), "tcp lo", "", true, "conformance"),
                64);
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        try {
            return List.of(UnixDomainSocketAddress.of("x"), InetSocketAddress.createUnresolved("nowhere.invalid", 0),
                    new InetSocketAddress(InetAddress.getByName("239.1.2.3"), 0));
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public Timing timing() {
        return Timing.DEFAULT;
    }

    @Override
    public void close() {
        provider.deactivate();
    }
}
