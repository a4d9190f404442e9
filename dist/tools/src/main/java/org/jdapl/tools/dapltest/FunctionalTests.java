package org.jdapl.tools.dapltest;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.tools.ToolException;

/**
 * dapltest {@code -T F}: OFED dapltest's functional feature tests, with its feature names and case
 * numbers. Each case prints what it checks, every DAT call it makes with the return it got, and
 * {@code Result: PASS}, {@code FAIL} or {@code does not apply} (for a check that has no meaning in
 * the Java binding, such as a NULL out-parameter). Where the manual pages leave the outcome to the
 * provider, a case accepts every outcome they allow. The run fails if any case failed.
 */
final class FunctionalTests {
    /** The features, in OFED's order. */
    static final List<String> FEATURES = List.of("hwconn", "cqmgt", "endpoint", "pz", "mem", "connmgt", "queryinfo",
            "dataxfer", "dataxfer_client", "ns");

    /** The outcome of one case. */
    enum Verdict { PASS, FAIL, NOT_APPLICABLE }

    /** A case's body: returns normally to pass, throws {@link CaseFailure} to fail, {@link NotApplicable} if it does not apply. */
    interface Body {
        void run(Context c);
    }

    /** One case: its number is its index in the feature's list. */
    record Case(String description, Body body) {
    }

    /** A feature: OFED's title line and its cases. */
    record Feature(String name, String title, List<Case> cases) {
    }

    /** A check that did not hold. */
    static final class CaseFailure extends RuntimeException {
        CaseFailure(String message) {
            super(message, null, false, false);
        }
    }

    /** The case has no meaning here. */
    static final class NotApplicable extends RuntimeException {
        NotApplicable(String message) {
            super(message, null, false, false);
        }
    }

    /** What a case works with: the IA name, the server, the output, and the IAs it opened (closed after the case). */
    final class Context {
        final DapltestOptions options = FunctionalTests.this.options;
        final String iaName = options.iaName();
        private final List<InterfaceAdapter> opened = new ArrayList<>();

        InterfaceAdapter open() {
            InterfaceAdapter ia = call("dat_ia_open(" + iaName + ")", () -> registry.open(iaName, 16));
            opened.add(ia);
            return ia;
        }

        /** {@code dat_ia_open} of another IA name, for the cases that expect it to fail. */
        InterfaceAdapter registryOpen(String name) {
            InterfaceAdapter ia = registry.open(name, 16);
            opened.add(ia);
            return ia;
        }

        /** Prints a line of the case. */
        void say(String line) {
            out.println("\t" + line);
        }

        /** Runs a DAT call that must succeed, prints it, and returns its result. */
        <T> T call(String what, Supplier<T> call) {
            try {
                T result = call.get();
                say(what + ": DAT_SUCCESS");
                return result;
            } catch (DatException e) {
                throw new CaseFailure(what + ": " + e.getMessage() + " (expected DAT_SUCCESS)");
            }
        }

        void call(String what, Runnable call) {
            call(what, () -> {
                call.run();
                return null;
            });
        }

        /** Runs a DAT call that must fail with one of {@code allowed} (DAT_SUCCESS allowed if listed) and prints it. */
        DatReturnType expect(String what, Runnable call, DatReturnType... allowed) {
            DatReturnType got;
            String detail = "";
            try {
                call.run();
                got = DatReturnType.SUCCESS;
            } catch (DatException e) {
                got = e.type();
                detail = " (" + e.subtype() + ")";
            }
            List<DatReturnType> ok = Arrays.asList(allowed);
            say(what + ": " + got.datName() + detail + (ok.contains(got) ? "" : ", FAIL: expected " + names(ok)));
            if (!ok.contains(got)) {
                throw new CaseFailure(what + " returned " + got.datName() + ", expected " + names(ok));
            }
            return got;
        }

        /** Fails the case unless {@code condition}. */
        void check(boolean condition, String what) {
            say(what + (condition ? ": yes" : ": NO"));
            if (!condition) {
                throw new CaseFailure(what + " does not hold");
            }
        }

        /** Runs {@code client} against the server of {@code -s} or one in this process. */
        void withServer(Consumer<Dapltest.Target> client) {
            FunctionalTests.this.withServer.accept(options, client);
        }

        private void closeAll() {
            for (InterfaceAdapter ia : opened) {
                try {
                    if (!ia.isFreed()) {
                        ia.close();
                    }
                } catch (DatException e) {
                    // closed concurrently
                }
            }
        }
    }

    private static String names(List<DatReturnType> types) {
        return String.join(" or ", types.stream().map(DatReturnType::datName).toList());
    }

    /** Whether a handle was freed, as a case prints it. */
    static String state(DatHandle handle) {
        return handle.isFreed() ? "freed" : "live";
    }

    private final DatRegistry registry;
    private final DapltestOptions options;
    private final PrintStream out;
    private final BiConsumer<DapltestOptions, Consumer<Dapltest.Target>> withServer;

    FunctionalTests(DatRegistry registry, DapltestOptions options, PrintStream out,
                    BiConsumer<DapltestOptions, Consumer<Dapltest.Target>> withServer) {
        this.registry = registry;
        this.options = options;
        this.out = out;
        this.withServer = withServer;
    }

    /**
     * Runs the feature's cases (those of the command line, or all).
     *
     * @throws ToolException USAGE for a case the feature does not have, FAILURE if a case failed
     */
    void run() {
        Feature feature = FftCases.feature(options.feature());
        List<Integer> numbers = options.cases().isEmpty()
                ? java.util.stream.IntStream.range(0, feature.cases().size()).boxed().toList() : options.cases();
        for (int n : numbers) {
            if (n >= feature.cases().size()) {
                throw ToolException.usage("dapltest: " + feature.name() + " has cases 0 to " + (feature.cases().size() - 1)
                        + ", not " + n);
            }
        }
        int passed = 0;
        int failed = 0;
        int notApplicable = 0;
        String rule = "*********************************************************************";
        for (int n : numbers) {
            Case c = feature.cases().get(n);
            out.println(rule);
            out.printf("Function feature: %-40s case: %d%n", feature.title(), n);
            out.println("\tDescription: " + c.description());
            Context context = new Context();
            Verdict verdict;
            try {
                c.body().run(context);
                verdict = Verdict.PASS;
            } catch (NotApplicable e) {
                context.say(e.getMessage());
                verdict = Verdict.NOT_APPLICABLE;
            } catch (CaseFailure e) {
                context.say("FAIL: " + e.getMessage());
                verdict = Verdict.FAIL;
            } catch (RuntimeException e) {
                context.say("FAIL: " + Session.describe(e));
                verdict = Verdict.FAIL;
            } finally {
                context.closeAll();
            }
            switch (verdict) {
                case PASS -> passed++;
                case FAIL -> failed++;
                case NOT_APPLICABLE -> notApplicable++;
            }
            out.println("Result: " + (verdict == Verdict.NOT_APPLICABLE ? "does not apply" : verdict.name()));
            out.println(rule);
            out.flush();
        }
        out.printf("dapltest -T F %s: %d case(s): %d passed, %d failed, %d do not apply%n", feature.name(),
                numbers.size(), passed, failed, notApplicable);
        if (failed > 0) {
            throw ToolException.failure("dapltest -T F " + feature.name() + ": " + failed + " case(s) failed");
        }
        out.println(passed == 0 ? "dapltest: nothing checked (no case applies)" : "dapltest: PASSED");
    }
}
