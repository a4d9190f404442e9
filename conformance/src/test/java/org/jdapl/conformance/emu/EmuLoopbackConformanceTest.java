package org.jdapl.conformance.emu;

import org.jdapl.conformance.ConformanceFixture;

/** The conformance kit against the emulated provider's loopback fabric: {@code emu-loopback.txt}. */
class EmuLoopbackConformanceTest extends ConformanceTestFactory {
    @Override
    protected ConformanceFixture openFixture() {
        return new EmuLoopbackFixture();
    }
}
