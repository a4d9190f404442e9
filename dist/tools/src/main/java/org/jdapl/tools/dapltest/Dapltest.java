package org.jdapl.tools.dapltest;

import java.io.PrintStream;
import java.util.List;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.tools.Progress;
import org.jdapl.tools.Table;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;

/**
 * {@code dapltest}: the transaction test ({@code -T T}) and the performance test ({@code -T P})
 * of uDAPL's dapltest, with the server and the client side in this process, each on its own
 * opening of the IA (over the emulated provider: its loopback fabric).
 */
public final class Dapltest {
    private final DatRegistry registry;
    private final PrintStream out;

    /** A dapltest that opens IAs through {@code registry} and prints to {@code out}. */
    public Dapltest(DatRegistry registry, PrintStream out) {
        this.registry = registry;
        this.out = out;
    }

    /**
     * Runs dapltest with the given arguments.
     *
     * @throws ToolException USAGE for a bad command line, FAILURE for a failed run
     */
    public void run(List<String> args) {
        if (args.contains("--help") || args.contains("-?")) {
            out.println(DapltestOptions.USAGE);
            return;
        }
        DapltestOptions options;
        try {
            options = DapltestOptions.parse(args);
        } catch (ToolException e) {
            throw new ToolException(e.status(), e.getMessage() + "\n" + DapltestOptions.USAGE);
        }
        try (Sides sides = Sides.open(registry, options)) {
            ProviderAttributes provider = sides.clientIa.query().provider();
            out.printf("dapltest: IA %s (provider %s %d.%d), server and client in this process%n", options.iaName(),
                    provider.providerName(), provider.providerVersionMajor(), provider.providerVersionMinor());
            if (options.test() == 'T') {
                transaction(sides, options);
            } else {
                performance(sides, options);
            }
            sides.closeGracefully();
        }
    }

    private void transaction(Sides sides, DapltestOptions options) {
        out.printf("dapltest -T T: %d thread%s x %d endpoint pair%s x %d iterations, validation %s%n",
                options.threads(), options.threads() == 1 ? "" : "s", options.endpoints(),
                options.endpoints() == 1 ? "" : "s", options.iterations(), options.validate() ? "on" : "off");
        out.flush();
        TransactionTest test = new TransactionTest(sides, options);
        long nanos;
        try (Progress progress = Progress.start(out, "dapltest", test.total(), test.done::get)) {
            nanos = test.run();
        }
        Table table = new Table().column("operation").numeric("ops").numeric("bytes");
        long ops = 0;
        long bytes = 0;
        for (int i = 0; i < options.ops().size(); i++) {
            Op op = options.ops().get(i);
            long count = test.counts[i].get();
            table.row(op, count, Units.size(count * op.size()));
            ops += count;
            bytes += count * op.size();
        }
        table.row("total", ops, Units.size(bytes));
        out.println();
        table.print(out, "");
        out.println();
        out.printf("dapltest -T T: %d operations in %s (%s, %s)%n", ops, Units.duration(nanos),
                Units.rate(ops, nanos), Units.bandwidth(bytes, nanos));
        out.println("dapltest: PASSED" + (options.validate() ? " (data validated)" : ""));
    }

    private void performance(Sides sides, DapltestOptions options) {
        Op op = options.ops().getFirst();
        out.printf("dapltest -T P: %s, %d operations, pipeline %d%n", op, options.iterations(), options.pipeline());
        out.flush();
        PerformanceTest test = new PerformanceTest(sides, options);
        long nanos;
        try (Progress progress = Progress.start(out, "dapltest", options.iterations(), test.done::get)) {
            nanos = test.run();
        }
        long bytes = (long) options.iterations() * op.size();
        Table table = new Table().column("operation").numeric("ops").numeric("time").numeric("per op")
                .numeric("ops/s").numeric("bandwidth");
        table.row(op, options.iterations(), Units.duration(nanos), Units.duration((double) nanos / options.iterations()),
                Units.rate(options.iterations(), nanos), Units.bandwidth(bytes, nanos));
        out.println();
        table.print(out, "");
        out.println();
        out.println("dapltest: PASSED");
    }
}
