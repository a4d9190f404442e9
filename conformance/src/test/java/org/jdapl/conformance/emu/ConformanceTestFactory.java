package org.jdapl.conformance.emu;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceCase;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.conformance.Outcome;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.opentest4j.AssertionFailedError;

/**
 * Runs every case of the conformance kit against the fixture a subclass opens, one dynamic test per
 * conformance ID (a SKIP is an aborted test, a FAIL a failed one), and writes
 * {@code target/conformance/<fixture name>.txt}. The system property {@code jdapl.conformance.only}
 * (a regular expression over the IDs, all by default) runs some of the cases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ConformanceTestFactory {
    private final List<CaseResult> results = Collections.synchronizedList(new ArrayList<>());
    private ConformanceFixture fixture;

    /** The provider under test. */
    protected abstract ConformanceFixture openFixture();

    @BeforeAll
    void open() {
        fixture = openFixture();
    }

    @AfterAll
    void writeReport() throws Exception {
        try {
            Path dir = Path.of(System.getProperty("jdapl.conformance.reports", "target/conformance"));
            ConformanceKit.writeReport(dir.resolve(fixture.name() + ".txt"), results);
        } finally {
            fixture.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> conformance() {
        String only = System.getProperty("jdapl.conformance.only", ".*");
        return ConformanceKit.cases().stream().filter(c -> c.id().matches(only))
                .map(c -> DynamicTest.dynamicTest(c.displayName(), () -> run(c)));
    }

    private void run(ConformanceCase c) {
        CaseResult r = ConformanceKit.runCase(c, fixture);
        results.add(r);
        if (r.outcome() == Outcome.SKIP) {
            Assumptions.abort(r.reason());
        }
        if (r.outcome() == Outcome.FAIL) {
            throw new AssertionFailedError(c.displayName() + ": " + r.reason(), r.failure());
        }
    }
}
