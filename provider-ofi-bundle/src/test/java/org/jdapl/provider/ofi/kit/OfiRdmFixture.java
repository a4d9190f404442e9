package org.jdapl.provider.ofi.kit;

import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Skip;
import org.jdapl.conformance.Timing;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;
import org.jdapl.provider.ofi.OfiTransportBreak;

/**
 * The ofi provider under the kit on a libfabric provider with reliable-datagram endpoints only
 * (shm: {@code ofi-shm}; {@code tcp;ofi_rxm} on {@code lo}: {@code ofi-tcp-rxm}), both IAs in this JVM.
 */
public final class OfiRdmFixture implements ConformanceFixture {
    private final OfiProvider provider = new OfiProvider();
    private final AtomicInteger opened = new AtomicInteger();
    private final String name;
    private final String iaParams;

    /** A fixture {@code name} whose IAs are opened with {@code iaParams} (e.g. {@code "shm"}). */
    public OfiRdmFixture(String name, String iaParams) {
        this.name = name;
        this.iaParams = iaParams;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IaPair openPair() {
        return new IaPair(open(), open());
    }

    private InterfaceAdapter open() {
        return provider.open(new IaSpec("ofi-v2-" + name + "-" + opened.incrementAndGet(), iaParams, "", true,
                "conformance"), 64);
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        return new OfiTcpFixture().invalidAddresses();
    }

    /**
     * shm reaches this host only: an address of no interface here (TEST-NET-1, RFC 5737) is
     * unreachable. A socket-address provider (rxm) is given the tcp fixture's: an address of the
     * tests' network namespace, which has no route ({@link OfiTcpFixture#unreachableAddress}).
     */
    @Override
    public SocketAddress unreachableAddress() {
        if (!iaParams.equals("shm")) {
            return new OfiTcpFixture().unreachableAddress();
        }
        try {
            java.net.InetAddress a = java.net.InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 1});
            if (java.net.NetworkInterface.getByInetAddress(a) != null) {
                throw new Skip("192.0.2.1 is an address of this host");
            }
            return new java.net.InetSocketAddress(a, 0);
        } catch (java.io.IOException e) {
            throw new Skip("no unreachable address: " + e.getMessage());
        }
    }

    /**
     * An RDM connection has no transport connection of its own: the control path of the EP's
     * connection is cut both ways ({@link OfiTransportBreak#silence}), as a dead peer or a cut path
     * leaves it, and each side's keepalive reports BROKEN within its bound (RDM_PROTOCOL.md).
     */
    @Override
    public void breakTransport(Endpoint ep) {
        if (!OfiTransportBreak.silence(ep)) {
            throw new Skip("the EP is not connected over RDM");
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
