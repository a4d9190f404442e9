package org.jdapl.provider.ofi.kit;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Timing;
import org.jdapl.dat.Endpoint;

/**
 * The ofi provider on libfabric's {@code verbs;ofi_rxm} (reliable datagrams over verbs RC queue pairs,
 * the connection protocol over RDM) under the kit in the Soft-RoCE guest ({@code scripts/rxe/guest-tests.sh},
 * part {@code ofi} with {@code RXE_OFI_KITS} naming {@code rxm}): two IAs {@code "verbs;ofi_rxm <device>"}
 * in one JVM ({@link OfiRdmFixture}), the device from {@code JDAPL_RXE_DEVICE} (rxe0), the verbs
 * fixture's bounds for an emulated CPU. The report is {@code ofi-verbs-rxm-rxe.txt}.
 */
public final class OfiVerbsRxmFixture implements ConformanceFixture {
    private static final String DEVICE = System.getenv().getOrDefault("JDAPL_RXE_DEVICE", "rxe0");

    private final OfiRdmFixture rdm = new OfiRdmFixture("verbs-rxm-" + DEVICE, "verbs;ofi_rxm " + DEVICE);
    private final OfiVerbsFixture verbs = new OfiVerbsFixture();

    @Override
    public String name() {
        return "ofi-verbs-rxm-rxe";
    }

    @Override
    public IaPair openPair() {
        return rdm.openPair();
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        return rdm.invalidAddresses();
    }

    /** As on {@code tcp;ofi_rxm} ({@link OfiRdmFixture#unreachableAddress}): none outside the tests' network namespace (CONN_06 SKIPs). */
    @Override
    public SocketAddress unreachableAddress() {
        return rdm.unreachableAddress();
    }

    @Override
    public void breakTransport(Endpoint ep) {
        rdm.breakTransport(ep);
    }

    /**
     * The verbs fixture's bounds, but an event within 30 s (the kit's long connect time-out, 4 x that,
     * is 2 minutes) and a case within 10 minutes: each rxm endpoint's open over verbs asks libfabric's
     * verbs provider for its {@code fi_info} again (an address resolution through the RDMA CM) and
     * creates a listening RDMA CM id, an EQ and a device CQ; under the emulated CPU CONN_05's 300
     * connects took 190 s (the first ones timed out after the verbs fixture's 60 s, the case failed
     * after its 90 s).
     */
    @Override
    public Timing timing() {
        Timing t = verbs.timing();
        return new Timing(Duration.ofSeconds(30), t.grace(), Duration.ofMinutes(10), t.connectTimeout());
    }

    @Override
    public void close() {
        try {
            rdm.close();
        } finally {
            verbs.close();
        }
    }
}
