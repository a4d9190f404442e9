package org.jdapl.conformance.emu.tcp;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceCase;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.conformance.Outcome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.opentest4j.AssertionFailedError;

/**
 * Runs every case of the conformance kit against the emulated provider's tcp fabric with the peer IA in a second JVM, one
 * dynamic test per conformance ID (a SKIP is an aborted test, a FAIL a failed one), and writes
 * {@code target/conformance/emu-tcp.txt}.
 */
class EmuTcpConformanceTest {
    private static final List<CaseResult> RESULTS = Collections.synchronizedList(new ArrayList<>());
    private static EmuTcpFixture fixture;

    @BeforeAll
    static void openFixture() {
        fixture = new EmuTcpFixture();
    }

    @AfterAll
    static void writeReport() {
        try {
            Path dir = Path.of(System.getProperty("jdapl.conformance.reports", "target/conformance"));
            ConformanceKit.writeReport(dir.resolve(fixture.name() + ".txt"), RESULTS);
        } finally {
            fixture.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> conformance() {
        return ConformanceKit.cases().stream().map(c -> DynamicTest.dynamicTest(c.displayName(), () -> run(c)));
    }

    private static void run(ConformanceCase c) {
        CaseResult r = ConformanceKit.runCase(c, fixture);
        RESULTS.add(r);
        if (r.outcome() == Outcome.SKIP) {
            Assumptions.abort(r.reason());
        }
        if (r.outcome() == Outcome.FAIL) {
            throw new AssertionFailedError(c.displayName() + ": " + r.reason(), r.failure());
        }
    }
}
