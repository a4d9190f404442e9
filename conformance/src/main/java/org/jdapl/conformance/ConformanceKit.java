package org.jdapl.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jdapl.conformance.cases.AtomicCases;
import org.jdapl.conformance.cases.ConnectCases;
import org.jdapl.conformance.cases.CounterCases;
import org.jdapl.conformance.cases.DatagramCases;
import org.jdapl.conformance.cases.DisconnectCases;
import org.jdapl.conformance.cases.EndedConnectionCases;
import org.jdapl.conformance.cases.EpFreeCases;
import org.jdapl.conformance.cases.ImmediateCases;
import org.jdapl.conformance.cases.LmrFreeCases;
import org.jdapl.conformance.cases.ObjectCases;
import org.jdapl.conformance.cases.Rig;
import org.jdapl.conformance.cases.WatermarkCases;
import org.jdapl.dat.DatException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the conformance cases against a provider through its {@link ConformanceFixture}: each case
 * in a thread of its own, bounded by {@link Timing#caseTimeout()}, with everything the case opened
 * closed afterwards (also when it fails or times out). The report has one line per ID:
 * {@code ID PASS|FAIL|SKIP reason}.
 */
public final class ConformanceKit {
    private static final Logger LOG = LoggerFactory.getLogger(ConformanceKit.class);
    private static final List<String> SECTIONS = List.of("CONN", "DISC", "FREE", "LMR", "OBJ", "SRQ", "EP",
            "EXT");
    private static final List<Class<?>> CASE_CLASSES = List.of(ConnectCases.class, DisconnectCases.class,
            EndedConnectionCases.class, EpFreeCases.class, LmrFreeCases.class, ObjectCases.class,
            WatermarkCases.class, AtomicCases.class, ImmediateCases.class, DatagramCases.class, CounterCases.class);

    private ConformanceKit() {
    }

    /**
     * Every case of the kit, in the order of the conformance list (CONN, DISC, FREE, LMR, OBJ, SRQ,
     * EP, EXT, by number).
     *
     * @throws IllegalStateException if two cases claim one ID (a defect of the kit)
     */
    public static List<ConformanceCase> cases() {
        List<ConformanceCase> cases = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (Class<?> type : CASE_CLASSES) {
            for (Method m : type.getDeclaredMethods()) {
                Conformance c = m.getAnnotation(Conformance.class);
                if (c == null) {
                    continue;
                }
                if (!Modifier.isPublic(m.getModifiers()) || m.getParameterCount() != 1
                        || m.getParameterTypes()[0] != Rig.class) {
                    throw new IllegalStateException("case " + m + " must be public and take a Rig");
                }
                if (!ids.add(c.value())) {
                    throw new IllegalStateException("two cases for " + c.value());
                }
                cases.add(new ConformanceCase(c.value(), m));
            }
        }
        cases.sort(Comparator.comparingInt((ConformanceCase c) -> SECTIONS.indexOf(c.section()))
                .thenComparingInt(c -> Integer.parseInt(c.id().substring(c.id().indexOf('_') + 1))));
        return List.copyOf(cases);
    }

    /** Runs every case against the fixture's provider. */
    public static List<CaseResult> run(ConformanceFixture fixture) {
        List<CaseResult> results = new ArrayList<>();
        for (ConformanceCase c : cases()) {
            results.add(runCase(c, fixture));
        }
        return results;
    }

    /**
     * Runs every case and writes the report.
     *
     * @throws UncheckedIOException if the report cannot be written
     */
    public static List<CaseResult> run(ConformanceFixture fixture, Path report) {
        List<CaseResult> results = run(fixture);
        writeReport(report, results);
        return results;
    }

    /**
     * Runs one case in a thread of its own, bounded by the fixture's case timeout. The case's IAs
     * and memory are released afterwards whatever happened.
     */
    public static CaseResult runCase(ConformanceCase c, ConformanceFixture fixture) {
        Timing timing = fixture.timing();
        Rig rig = new Rig(fixture, c.id());
        CompletableFuture<Throwable> done = new CompletableFuture<>();
        long start = System.nanoTime();
        LOG.debug("{}: start against {}", c.displayName(), fixture.name());
        Thread worker = Thread.ofPlatform().daemon().name("conformance-" + c.id()).start(() -> {
            Throwable thrown = null;
            try {
                c.invoke(rig);
            } catch (Throwable t) {
                thrown = t;
            } finally {
                try {
                    rig.close();
                } catch (Throwable t) {
                    if (thrown == null) {
                        thrown = new AssertionError("releasing the case's objects failed: " + t, t);
                    } else {
                        thrown.addSuppressed(t);
                    }
                }
            }
            done.complete(thrown);
        });
        Throwable thrown;
        try {
            thrown = done.get(timing.caseTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            worker.interrupt();
            try {
                rig.close();
            } catch (RuntimeException ignored) {
                // The case is failed already; releasing is best effort here.
            }
            thrown = new AssertionError("the case did not end within " + timing.caseTimeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            worker.interrupt();
            rig.close();
            thrown = new AssertionError("the run was interrupted");
        } catch (ExecutionException e) {
            thrown = e.getCause();
        }
        CaseResult result = classify(c, thrown, Duration.ofNanos(System.nanoTime() - start), rig.notes());
        LOG.info("{} {} {}", c.displayName(), result.outcome(), result.reason());
        return result;
    }

    private static CaseResult classify(ConformanceCase c, Throwable thrown, Duration elapsed, String notes) {
        if (thrown == null) {
            return new CaseResult(c.id(), c.displayName(), Outcome.PASS, notes, elapsed, null);
        }
        if (thrown instanceof Skip skip) {
            return new CaseResult(c.id(), c.displayName(), Outcome.SKIP, skip.getMessage(), elapsed, skip);
        }
        String reason;
        if (thrown instanceof AssertionError) {
            reason = String.valueOf(thrown.getMessage());
        } else if (thrown instanceof DatException de) {
            reason = "unexpected DatException " + de.getMessage();
        } else {
            reason = "unexpected " + thrown;
        }
        return new CaseResult(c.id(), c.displayName(), Outcome.FAIL, reason, elapsed, thrown);
    }

    /**
     * Writes the report: one line per ID, {@code ID PASS|FAIL|SKIP reason}, in the order given.
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    public static void writeReport(Path report, List<CaseResult> results) {
        List<String> lines = results.stream().map(CaseResult::reportLine).toList();
        try {
            Path parent = report.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.write(report, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the conformance report " + report, e);
        }
    }

    /** A one-line count of the outcomes, e.g. {@code 52 PASS, 0 FAIL, 2 SKIP}. */
    public static String summary(List<CaseResult> results) {
        long pass = results.stream().filter(r -> r.outcome() == Outcome.PASS).count();
        long fail = results.stream().filter(r -> r.outcome() == Outcome.FAIL).count();
        long skip = results.stream().filter(r -> r.outcome() == Outcome.SKIP).count();
        return pass + " PASS, " + fail + " FAIL, " + skip + " SKIP";
    }
}
