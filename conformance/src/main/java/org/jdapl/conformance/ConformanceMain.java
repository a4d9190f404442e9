package org.jdapl.conformance;

import java.nio.file.Path;
import java.util.List;

/**
 * Runs the kit from a command line:
 * {@code java -cp ... org.jdapl.conformance.ConformanceMain <fixture-class> <report-file>}.
 * The fixture class needs a public constructor without arguments. Prints each case's line and a
 * count; the exit status is 0 when no case failed, 1 when one did, 2 for a usage error.
 */
public final class ConformanceMain {
    private ConformanceMain() {
    }

    /**
     * Runs every case against the fixture and writes the report.
     *
     * @param args the fixture's class name and the report file
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ConformanceMain <fixture-class> <report-file>");
            System.exit(2);
            return;
        }
        Class<?> type = Class.forName(args[0]);
        if (!ConformanceFixture.class.isAssignableFrom(type)) {
            System.err.println(args[0] + " does not implement " + ConformanceFixture.class.getName());
            System.exit(2);
            return;
        }
        List<CaseResult> results;
        try (ConformanceFixture fixture = (ConformanceFixture) type.getDeclaredConstructor().newInstance()) {
            results = ConformanceKit.run(fixture, Path.of(args[1]));
        }
        results.forEach(r -> System.out.println(r.reportLine()));
        System.out.println(ConformanceKit.summary(results) + " -> " + args[1]);
        System.exit(results.stream().anyMatch(r -> r.outcome() == Outcome.FAIL) ? 1 : 0);
    }
}
