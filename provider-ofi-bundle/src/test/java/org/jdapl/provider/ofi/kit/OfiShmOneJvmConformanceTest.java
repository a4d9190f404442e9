package org.jdapl.provider.ofi.kit;

import org.jdapl.conformance.ConformanceFixture;

/** The kit on shm with both IAs in this JVM: {@code target/conformance/ofi-shm-1jvm.txt}. */
class OfiShmOneJvmConformanceTest extends OfiShmConformanceTest {
    @Override
    ConformanceFixture openFixture() {
        return new OfiRdmFixture("shm-1jvm", "shm");
    }
}
