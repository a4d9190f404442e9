package org.jdapl.provider.ofi.kit;

import org.jdapl.conformance.ConformanceFixture;

/**
 * The kit on libfabric's {@code tcp;ofi_rxm} (reliable datagrams over tcp connections on {@code lo})
 * with the peer IA in a second JVM: {@code target/conformance/ofi-tcp-rxm.txt}.
 */
class OfiTcpRxmConformanceTest extends OfiShmConformanceTest {
    @Override
    ConformanceFixture openFixture() {
        return OfiTwoJvmFixture.rdm("tcp-rxm", "tcp;ofi_rxm lo");
    }
}
