package org.jdapl.provider.ofa.rxe;

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
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.faults.OfaFaults;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * The OFA provider on a Soft-RoCE device under the conformance kit: two IAs on the same rxe port
 * (rdma_cm connects them over the port's IPv4 address, through rxe's loopback), an unreachable
 * address of the subnet that no host answers ARP for, and a broken transport made by a fatal QP
 * error. The device comes from {@code JDAPL_RXE_DEVICE} (rxe0).
 *
 * <p>Its IAs are named {@code jdapl-*} (jdapl's private data convention: the receiver gets exactly
 * the bytes sent), or, with {@link #OfaRxeFixture(boolean) ofedWire}, {@code ofa-v2-*} as OFED's
 * dat.conf names them (OFED uDAPL's convention: the receiver gets rdma_cm's whole buffer, the bytes
 * sent and then zeros, which {@link #deliveredPrivateData} tells the kit).
 */
public final class OfaRxeFixture implements ConformanceFixture {
    private static final String DEVICE = System.getenv().getOrDefault("JDAPL_RXE_DEVICE", "rxe0");

    /** The private data buffers of a REQ, a REP and a REJ (less OFED's 4-byte reject header) on RoCE. */
    private static final int REQ_BUFFER = 56;
    private static final int REP_BUFFER = 196;
    private static final int REJ_BUFFER = 148 - 4;

    private final OfaProvider provider = new OfaProvider();
    private final AtomicInteger opened = new AtomicInteger();
    private final boolean ofedWire;

    /** A fixture on the device of {@code JDAPL_RXE_DEVICE}, with jdapl-* IAs. */
    public OfaRxeFixture() {
        this(false);
    }

    /** A fixture on the device of {@code JDAPL_RXE_DEVICE}, with ofa-v2-* IAs if {@code ofedWire}. */
    public OfaRxeFixture(boolean ofedWire) {
        this.ofedWire = ofedWire;
    }

    @Override
    public String name() {
        return ofedWire ? "ofa-v2-rxe" : "ofa-rxe";
    }

    /** CONN_10, CONN_13: exactly the bytes sent, or on ofa-v2-* IAs the whole buffer of the message. */
    @Override
    public byte[] deliveredPrivateData(PrivateDataCarrier carrier, byte[] sent) {
        if (!ofedWire) {
            return sent;
        }
        return java.util.Arrays.copyOf(sent, switch (carrier) {
            case CONNECT -> REQ_BUFFER;
            case ACCEPT -> REP_BUFFER;
            case REJECT -> REJ_BUFFER;
        });
    }

    @Override
    public IaPair openPair() {
        return new IaPair(open(), open());
    }

    private InterfaceAdapter open() {
        // ofa-v2-* IAs speak OFED's private data convention (also proven against OFED's uDAPL,
        // scripts/rxe/guest-interop.sh), any other name jdapl's.
        String name = (ofedWire ? "ofa-v2-" : "jdapl-") + DEVICE + "-1-" + opened.incrementAndGet();
        return provider.open(new IaSpec(name, DEVICE + " 1", "", true, "conformance"), 256);
    }

    /**
     * An address of the device's subnet that no host has: ARP goes unanswered and rdma_resolve_addr
     * ends in ADDR_ERROR.
     */
    @Override
    public SocketAddress unreachableAddress() {
        return new InetSocketAddress(literal(System.getenv().getOrDefault("JDAPL_RXE_UNREACHABLE", "192.168.77.254")),
                0);
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
     * Fails the transport under the connection as a fatal QP error does (the QP goes to the error
     * state, {@link OfaFaults#breakConnection}). Taking the rxe interface down (IBV_EVENT_PORT_ERR,
     * which the provider also maps to BROKEN) is not used: rdma_cm on rxe does not deliver connect
     * requests any more after the link came back.
     */
    @Override
    public void breakTransport(Endpoint ep) {
        OfaFaults.breakConnection(ep);
    }

    /** Soft-RoCE under an emulated CPU is slow: longer event bounds than an in-process provider. */
    @Override
    public Timing timing() {
        return new Timing(Duration.ofSeconds(15), Duration.ofMillis(400), Duration.ofSeconds(90),
                Duration.ofSeconds(2));
    }
}
