package org.jdapl.conformance.emu.tcp;

import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.emu.ConformanceTestFactory;

/** The conformance kit against the emulated provider's tcp fabric, the peer IA in a second JVM: {@code emu-tcp.txt}. */
class EmuTcpConformanceTest extends ConformanceTestFactory {
    @Override
    protected ConformanceFixture openFixture() {
        return new EmuTcpFixture();
    }
}
