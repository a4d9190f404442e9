package org.jdapl.provider.ofi.kit;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Timing;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;
import org.jdapl.provider.ofi.OfiTransportBreak;

/**
 * The ofi provider on libfabric's verbs provider ({@code FI_EP_MSG}) under the kit, in the
 * Soft-RoCE guest ({@code scripts/rxe/guest-tests.sh}, part {@code ofi}): two IAs {@code "verbs
 * <device>"} on the same rxe device (libfabric's verbs provider connects them through rdma_cm over
 * the device's IPv4 address), an address of the device's subnet that no host answers ARP for, and
 * a connection broken below the DAT layer ({@link #breakTransport}). The
 * device comes from {@code JDAPL_RXE_DEVICE} (rxe0), the unreachable address from
 * {@code JDAPL_RXE_UNREACHABLE} (192.168.77.254).
 */
public final class OfiVerbsFixture implements ConformanceFixture {
    private static final String DEVICE = System.getenv().getOrDefault("JDAPL_RXE_DEVICE", "rxe0");

    private final OfiProvider provider = new OfiProvider();
    private final AtomicInteger opened = new AtomicInteger();

    @Override
    public String name() {
        return "ofi-verbs-rxe";
    }

    @Override
    public IaPair openPair() {
        return new IaPair(open(), open());
    }

    private InterfaceAdapter open() {
        return provider.open(new IaSpec("ofi-v2-verbs-" + DEVICE + "-" + opened.incrementAndGet(), "verbs " + DEVICE,
                "", true, "conformance"), 256);
    }

    /**
     * An address of the device's subnet that no host has: ARP goes unanswered, rdma_cm's address
     * resolution fails and the connect ends unreachable.
     */
    @Override
    public SocketAddress unreachableAddress() {
        return new InetSocketAddress(literal(System.getenv().getOrDefault("JDAPL_RXE_UNREACHABLE", "192.168.77.254")),
                0);
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        return List.of(UnixDomainSocketAddress.of("x"), InetSocketAddress.createUnresolved("nowhere.invalid", 0),
                new InetSocketAddress(literal("239.1.2.3"), 0));
    }

    private static InetAddress literal(String ip) {
        try {
            return InetAddress.getByName(ip);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(ip, e);
        }
    }

    /**
     * Breaks the connection under {@code ep} below the DAT layer, as a cut link or a fatal queue pair
     * error does: {@code rdma_disconnect} of its rdma_cm id through {@code fi_shutdown}
     * ({@link OfiTransportBreak}), which neither consumer asked for.
     */
    @Override
    public void breakTransport(Endpoint ep) {
        if (!OfiTransportBreak.shutdown(ep)) {
            throw new Skip("the EP has no libfabric endpoint to break");
        }
    }

    /** Soft-RoCE under an emulated CPU is slow: the OFA fixture's bounds on the same device. */
    @Override
    public Timing timing() {
        return new Timing(Duration.ofSeconds(15), Duration.ofMillis(400), Duration.ofSeconds(90),
                Duration.ofSeconds(2));
    }

    @Override
    public void close() {
        provider.deactivate();
    }
}
