package org.jdapl.provider.ofi.kit;

import org.jdapl.conformance.ConformanceFixture;

/**
 * The kit on shm with both IAs in this JVM: {@code target/conformance/ofi-shm-1jvm.txt}. It runs with
 * {@code -Djdapl.ofi.rdmKit=true}: a request in flight on a data endpoint held open for its peer of
 * this process may still move bytes after the connection's terminal event (RDM_PROTOCOL.md, shm
 * peers in the same process), which fails DISC_15 in some runs.
 */
class OfiShmOneJvmConformanceTest extends OfiShmConformanceTest {
    @Override
    boolean byDefault() {
        return false;
    }

    @Override
    ConformanceFixture openFixture() {
        return new OfiRdmFixture("shm-1jvm", "shm");
    }
}
