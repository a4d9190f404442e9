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
import org.jdapl.conformance.Skip;
import org.jdapl.dat.Endpoint;
import org.jdapl.provider.ofi.OfiHost;
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

    /**
     * An address no route leads to, where the tests run in a network namespace of their own with only
     * the loopback device ({@code scripts/ofi/netns/bin/java} sets {@code JDAPL_NETNS=1}; its routing
     * table, {@code /proc/self/net/route}, has no entry): a connect to it fails {@code ENETUNREACH}
     * at once, and no packet leaves the host (CONN_06). Elsewhere such an address would send SYNs
     * to the network, so the case is skipped.
     */
    @Override
    public SocketAddress unreachableAddress() {
        if (!"1".equals(System.getenv("JDAPL_NETNS"))) {
            throw new Skip("the tests do not run in a network namespace of their own (scripts/ofi/netns/bin/java:"
                    + " unshare -rn, ip or libfabric missing), and outside one an unreachable address would send"
                    + " packets to the network");
        }
        try {
            if (java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/net/route")).size() > 1) {
                throw new Skip("the network namespace has routes, so no address is surely unreachable");
            }
            return new InetSocketAddress(InetAddress.getByName("10.77.0.2"), 0);
        } catch (java.io.IOException e) {
            throw new Skip("cannot read /proc/self/net/route: " + e.getMessage());
        }
    }

    /**
     * Breaks the TCP connection under {@code ep} as a dead peer host does: {@code ss -K} destroys
     * both of its sockets (the kernel's sock_diag destroy; needs root and CONFIG_INET_DIAG_DESTROY).
     */
    @Override
    public void breakTransport(Endpoint ep) {
        long port = ep.query().localPortQual();
        if (port <= 0) {
            throw new Skip("the EP has no local port to break");
        }
        String filter = "( sport = :" + port + " or dport = :" + port + " )";
        try {
            OfiHost.Result r = OfiHost.run(List.of("ss", "-K", "-t", filter), 30);
            if (r.exit() != 0 || !r.output().contains(":" + port)) {
                throw new Skip("ss -K could not destroy the connection's sockets (needs root and "
                        + "CONFIG_INET_DIAG_DESTROY): " + r.output().strip());
            }
        } catch (java.io.IOException e) {
            throw new Skip("cannot run ss -K: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Skip("interrupted");
        }
    }

    /**
     * libfabric 1.17's tcp provider carries no status for an RMA its target refuses: the target's
     * {@code tcpx_op_write}/{@code tcpx_op_read_req} fails {@code ofi_mr_verify}, {@code tcpx_progress_rx}
     * calls {@code tcpx_ep_disable(ep, 0, NULL, 0)} (shutdown of the socket, a plain FI_SHUTDOWN), and
     * the initiator's provider flushes the waiting RMA with {@code FI_ECANCELED} like any transfer at
     * any end of a connection.
     */
    @Override
    public String noRemoteAccessStatus() {
        return "libfabric 1.17's tcp provider sends no status for an RMA its target refuses (prov/tcp/src/tcpx_progress.c:"
                + " ofi_mr_verify fails in tcpx_op_write, line 602, or tcpx_op_read_req, line 545, and tcpx_progress_rx"
                + " shuts the connection down with tcpx_ep_disable(ep, 0, NULL, 0), line 709), and the initiator's"
                + " provider flushes the RMA with FI_ECANCELED as at any end of a connection (tcpx_ep.c lines 259, 273)";
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
