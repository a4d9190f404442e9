package org.jdapl.provider.ofi.kit;

import org.jdapl.conformance.ConformanceFixture;

/**
 * The kit on libfabric's {@code tcp;ofi_rxm} (reliable datagrams over tcp connections on {@code lo})
 * with the peer IA in a second JVM: {@code target/conformance/ofi-tcp-rxm.txt}. It runs with
 * {@code -Djdapl.ofi.rdmKit=true}: rxm 1.17 gives the buffer of a message received before an
 * endpoint's close back to the closed transport endpoint ({@code rxm_close_conn} closes it before it
 * reads the transport CQ), a use after free that jdapl's reads before the close make rarer but do not
 * rule out (a libfabric built with assertions stops at it in about one run of the kit in two; the
 * provider README).
 */
class OfiTcpRxmConformanceTest extends OfiShmConformanceTest {
    @Override
    boolean byDefault() {
        return false;
    }

    @Override
    ConformanceFixture openFixture() {
        return OfiTwoJvmFixture.rdm("tcp-rxm", "tcp;ofi_rxm lo");
    }
}
