package org.jdapl.provider.ofi.kit;

import org.jdapl.conformance.ConformanceFixture;

/**
 * The conformance kit against the ofi provider on libfabric's tcp provider over loopback with the
 * peer IA in a second JVM ({@link OfiTwoJvmFixture}): the report is
 * {@code target/conformance/ofi-tcp-2jvm.txt}; the open IDs are {@link OfiTcpConformanceTest#OPEN}.
 */
class OfiTcpTwoJvmConformanceTest extends OfiTcpConformanceTest {
    @Override
    ConformanceFixture openFixture() {
        return OfiTwoJvmFixture.tcp();
    }
}
