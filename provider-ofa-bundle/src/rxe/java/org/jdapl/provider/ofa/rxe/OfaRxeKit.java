package org.jdapl.provider.ofa.rxe;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceCase;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.conformance.Outcome;

/**
 * Runs the conformance kit against {@link OfaRxeFixture} in the Soft-RoCE guest, printing each
 * report line as its case ends (a run takes minutes under an emulated CPU), and writes the report;
 * then the cases whose outcome depends on the IA name's private data convention (CONN_10, CONN_13)
 * again on ofa-v2-* IAs (OFED uDAPL's convention), into {@code ofa-v2-rxe.txt} beside the report.
 * {@code java ... OfaRxeKit <report-file> [id-regex]}; the exit status is 1 if a case failed.
 */
public final class OfaRxeKit {
    private OfaRxeKit() {
    }

    /**
     * Runs the cases whose ID matches the pattern (all by default).
     *
     * @param args the report file and an optional ID pattern
     */
    public static void main(String[] args) {
        Path report = Path.of(args[0]);
        Pattern only = Pattern.compile(args.length > 1 ? args[1] : ".*");
        List<CaseResult> results = run(new OfaRxeFixture(), only, report);
        Pattern ofedWireCases = Pattern.compile("CONN_1[03]");
        List<CaseResult> ofed = run(new OfaRxeFixture(true),
                Pattern.compile("(?=(?:" + only.pattern() + ")$)" + ofedWireCases.pattern()),
                report.resolveSibling("ofa-v2-rxe.txt"));
        boolean failed = results.stream().anyMatch(r -> r.outcome() == Outcome.FAIL)
                || ofed.stream().anyMatch(r -> r.outcome() == Outcome.FAIL);
        System.exit(failed ? 1 : 0);
    }

    private static List<CaseResult> run(OfaRxeFixture fixture, Pattern only, Path report) {
        List<CaseResult> results = new ArrayList<>();
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
                if (r.outcome() == Outcome.FAIL && r.reportLine().contains("did not end")) {
                    // Where the case hangs: the stacks of the kit's and the provider's threads.
                    Thread.getAllStackTraces().forEach((t, stack) -> {
                        if (t.getName().startsWith("conformance") || t.getName().startsWith("jdapl")) {
                            System.out.println("  thread " + t.getName() + ":");
                            for (StackTraceElement e : stack) {
                                System.out.println("    at " + e);
                            }
                        }
                    });
                }
                System.out.flush();
            }
        }
        ConformanceKit.writeReport(report, results);
        System.out.println(fixture.name() + ": " + ConformanceKit.summary(results) + " -> " + report);
        return results;
    }
}
