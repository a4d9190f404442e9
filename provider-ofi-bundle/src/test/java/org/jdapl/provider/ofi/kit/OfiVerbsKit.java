package org.jdapl.provider.ofi.kit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceCase;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.conformance.Outcome;

/**
 * Runs the conformance kit against {@link OfiVerbsFixture} (verbs MSG endpoints) or, with a third
 * argument {@code rxm}, {@link OfiVerbsRxmFixture} ({@code verbs;ofi_rxm}) in the Soft-RoCE guest (part
 * {@code ofi} of {@code scripts/rxe/run-guest-tests.sh}), printing each report line as its case ends,
 * and writes the report ({@code ofi-verbs-rxe.txt}, {@code ofi-verbs-rxm-rxe.txt}).
 * {@code java ... OfiVerbsKit <report-file> [id-regex [verbs|rxm]]}; the exit status is 1 if a case failed.
 */
public final class OfiVerbsKit {
    private OfiVerbsKit() {
    }

    /**
     * Runs the cases whose ID matches the pattern (all by default).
     *
     * @param args the report file, an optional ID pattern and an optional fixture ({@code verbs}, {@code rxm})
     */
    public static void main(String[] args) {
        Path report = Path.of(args[0]);
        Pattern only = Pattern.compile(args.length > 1 ? args[1] : ".*");
        List<CaseResult> results = new ArrayList<>();
        ConformanceFixture fixture = args.length > 2 && args[2].equals("rxm") ? new OfiVerbsRxmFixture()
                : new OfiVerbsFixture();
        try (fixture) {
            for (ConformanceCase c : ConformanceKit.cases()) {
                if (!only.matcher(c.id()).matches()) {
                    continue;
                }
                long t0 = System.nanoTime();
                CaseResult r = ConformanceKit.runCase(c, fixture);
                results.add(r);
                System.out.println(fixture.name() + ": " + r.reportLine() + "   ["
                        + (System.nanoTime() - t0) / 1_000_000 + " ms]");
                if (r.outcome() == Outcome.FAIL && r.failure() != null) {
                    r.failure().printStackTrace(System.out);
                }
                System.out.flush();
                ConformanceKit.writeReport(report, results); // what ran so far, should the JVM not survive the next case
            }
        }
        ConformanceKit.writeReport(report, results);
        System.out.println(fixture.name() + ": " + ConformanceKit.summary(results) + " -> " + report);
        System.exit(results.stream().anyMatch(r -> r.outcome() == Outcome.FAIL) ? 1 : 0);
    }
}
