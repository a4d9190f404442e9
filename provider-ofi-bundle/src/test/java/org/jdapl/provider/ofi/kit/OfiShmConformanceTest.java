package org.jdapl.provider.ofi.kit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceCase;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.conformance.Outcome;
import org.jdapl.provider.ofi.OfiHost;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.opentest4j.AssertionFailedError;

/**
 * The conformance kit against the ofi provider on libfabric's shm provider (reliable datagrams over
 * shared memory) with the peer IA in a second JVM: one dynamic test per conformance ID, the report in
 * {@code target/conformance/ofi-shm.txt}. Subclasses run it on {@code tcp;ofi_rxm} (every build) and on
 * shm in one JVM (with {@code -Djdapl.ofi.rdmKit=true}). Without libfabric every case is skipped with
 * the reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OfiShmConformanceTest {
    private final List<CaseResult> results = Collections.synchronizedList(new ArrayList<>());
    private ConformanceFixture fixture;
    private String missing;

    @BeforeAll
    void open() {
        if (!byDefault() && !Boolean.getBoolean("jdapl.ofi.rdmKit")) {
            missing = "this RDM conformance kit runs with -Djdapl.ofi.rdmKit=true (see the provider README)";
            return;
        }
        missing = OfiHost.ensure("runtime");
        if (missing == null) {
            fixture = openFixture();
        }
    }

    /**
     * Whether the kit runs in every build: the kits between two JVMs (shm, {@code tcp;ofi_rxm}) do;
     * shm in one JVM runs with {@code -Djdapl.ofi.rdmKit=true} (the provider README says why).
     */
    boolean byDefault() {
        return true;
    }

    /** The provider under the kit: the peer IA in a second JVM. */
    ConformanceFixture openFixture() {
        return OfiTwoJvmFixture.rdm("shm", "shm");
    }

    @AfterAll
    void writeReport() throws Exception {
        if (fixture == null) {
            return;
        }
        try {
            Path dir = Path.of(System.getProperty("jdapl.conformance.reports", "target/conformance"));
            ConformanceKit.writeReport(dir.resolve("ofi-" + fixture.name() + ".txt"), results);
        } finally {
            fixture.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> conformance() {
        String only = System.getProperty("jdapl.ofi.kitOnly");
        return ConformanceKit.cases().stream()
                .filter(c -> only == null || c.displayName().matches(only))
                .map(c -> DynamicTest.dynamicTest(c.displayName(), () -> run(c)));
    }

    /**
     * The IDs that do not pass over RDM yet, each with what is missing (the provider README's table).
     * A FAIL of one of them is written to the report and skipped here; a FAIL of any other ID fails the build.
     */
    Map<String, String> openIds() {
        return OPEN;
    }

    static final Map<String, String> OPEN = Map.of();

    private void run(ConformanceCase c) {
        Assumptions.assumeTrue(missing == null, missing);
        CaseResult r = ConformanceKit.runCase(c, fixture);
        results.add(r);
        if (r.outcome() == Outcome.SKIP) {
            Assumptions.abort(r.reason());
        }
        String open = openIds().get(c.id());
        if (r.outcome() == Outcome.FAIL && r.failure() != null && Boolean.getBoolean("jdapl.ofi.traces")) {
            r.failure().printStackTrace();
        }
        if (r.outcome() == Outcome.FAIL && open != null) {
            Assumptions.abort("open: " + open + " (" + r.reason() + ")");
        }
        if (r.outcome() == Outcome.PASS && open != null) {
            System.err.println(c.id() + " is on the open list and passed this run: " + open);
        }
        if (r.outcome() == Outcome.FAIL) {
            throw new AssertionFailedError(c.displayName() + ": " + r.reason(), r.failure());
        }
    }
}
