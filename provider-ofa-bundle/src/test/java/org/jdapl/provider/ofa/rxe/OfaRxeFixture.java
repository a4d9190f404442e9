package org.jdapl.provider.ofa.rxe;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Skip;
import org.jdapl.conformance.Timing;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * The OFA provider on a Soft-RoCE device under the conformance kit: two IAs on the same rxe port
 * (rdma_cm connects them over the port's IPv4 address, through rxe's loopback), an unreachable
 * address in a subnet the guest has no route to, and a broken transport made by taking the rxe
 * device's network interface down and up again ({@code ip link set}), which the device reports as
 * IBV_EVENT_PORT_ERR. Settings come from the guest script: {@code JDAPL_RXE_DEVICE} (rxe0) and
 * {@code JDAPL_RXE_NETDEV} (dummy0).
 */
public final class OfaRxeFixture implements ConformanceFixture {
    private static final String DEVICE = System.getenv().getOrDefault("JDAPL_RXE_DEVICE", "rxe0");
    private static final String NETDEV = System.getenv().getOrDefault("JDAPL_RXE_NETDEV", "dummy0");

    private final OfaProvider provider = new OfaProvider();
    private final AtomicInteger opened = new AtomicInteger();

    /** A fixture on the device of {@code JDAPL_RXE_DEVICE}. */
    public OfaRxeFixture() {
    }

    @Override
    public String name() {
        return "ofa-rxe";
    }

    @Override
    public IaPair openPair() {
        return new IaPair(open(), open());
    }

    private InterfaceAdapter open() {
        String name = "ofa-v2-" + DEVICE + "-1-" + opened.incrementAndGet();
        return provider.open(new IaSpec(name, DEVICE + " 1", "", true, "conformance"), 256);
    }

    /** An address of a subnet without a route in the guest: rdma_resolve_addr fails ENETUNREACH. */
    @Override
    public SocketAddress unreachableAddress() {
        return new InetSocketAddress(literal("10.254.254.254"), 0);
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        return List.of(UnixDomainSocketAddress.of("x"), InetSocketAddress.createUnresolved("nowhere.invalid", 0),
                new InetSocketAddress(literal("239.1.2.3"), 0), new InetSocketAddress(literal("0.0.0.0"), 0));
    }

    private static InetAddress literal(String ip) {
        try {
            return InetAddress.getByName(ip);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(ip, e);
        }
    }

    /**
     * Cuts the link under every connection of the port: the network interface goes down until the
     * device reports the port DOWN, then comes back up (the next cases need it).
     */
    @Override
    public void breakTransport(Endpoint ep) {
        Path state = Path.of("/sys/class/infiniband", DEVICE, "ports/1/state");
        if (!Files.isReadable(state)) {
            throw new Skip("no " + state + " to watch the port (not in the Soft-RoCE guest)");
        }
        ip("down");
        await(state, "DOWN");
        ip("up");
        await(state, "ACTIVE");
    }

    private static void ip(String updown) {
        try {
            Process p = new ProcessBuilder("ip", "link", "set", NETDEV, updown).redirectErrorStream(true).start();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new Skip("ip link set " + NETDEV + " " + updown + " failed: "
                        + new String(p.getInputStream().readAllBytes()));
            }
        } catch (IOException e) {
            throw new Skip("cannot run ip: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void await(Path state, String wanted) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try {
                if (Files.readString(state).contains(wanted)) {
                    return;
                }
                Thread.sleep(20);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + state, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        throw new IllegalStateException("port of " + DEVICE + " not " + wanted + " within 10 s");
    }

    /** Soft-RoCE under an emulated CPU is slow: longer event bounds than an in-process provider. */
    @Override
    public Timing timing() {
        return new Timing(Duration.ofSeconds(15), Duration.ofMillis(400), Duration.ofSeconds(240),
                Duration.ofSeconds(2));
    }
}
