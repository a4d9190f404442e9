package org.jdapl.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jdapl.conformance.cases.Rig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kit's runner and report, without any provider. */
class ConformanceKitTest {
    /** The IDs of the conformance list in sections CONN, DISC, FREE, LMR, OBJ, SRQ, EP and EXT, in order. */
    private static List<String> expectedIds() {
        List<String> ids = new ArrayList<>();
        String[] sections = {"CONN", "DISC", "FREE", "LMR", "OBJ", "SRQ", "EP", "EXT"};
        int[] counts = {13, 18, 7, 6, 10, 3, 2, 12};
        for (int s = 0; s < sections.length; s++) {
            for (int i = 1; i <= counts[s]; i++) {
                ids.add(String.format("%s_%02d", sections[s], i));
            }
        }
        return ids;
    }

    @Test
    void oneCasePerIdInListOrder() {
        List<ConformanceCase> cases = ConformanceKit.cases();
        assertEquals(expectedIds(), cases.stream().map(ConformanceCase::id).toList());
        for (ConformanceCase c : cases) {
            assertTrue(c.displayName().startsWith(c.id() + "_"), c.displayName());
            assertTrue(c.displayName().length() > c.id().length() + 5, c.displayName());
        }
    }

    /** Cases of this test, run through the kit's runner. */
    public static final class Probes {
        public void passes(Rig rig) {
            rig.note("a note");
        }

        public void fails(Rig rig) {
            throw new AssertionError("expected 1 but was\n2");
        }

        public void skips(Rig rig) {
            throw new Skip("cannot do it");
        }

        public void hangs(Rig rig) throws InterruptedException {
            Thread.sleep(60_000);
        }

        public void throwsOther(Rig rig) {
            throw new IllegalStateException("boom");
        }
    }

    private static final class NoProvider implements ConformanceFixture {
        @Override
        public String name() {
            return "none";
        }

        @Override
        public IaPair openPair() {
            throw new Skip("no provider");
        }

        @Override
        public Timing timing() {
            return new Timing(Duration.ofSeconds(1), Duration.ofMillis(10), Duration.ofMillis(300),
                    Duration.ofMillis(100));
        }
    }

    private static CaseResult run(String method) throws NoSuchMethodException {
        var c = new ConformanceCase("OBJ_99", Probes.class.getMethod(method, Rig.class));
        return ConformanceKit.runCase(c, new NoProvider());
    }

    @Test
    void outcomesAndReasons() throws Exception {
        CaseResult pass = run("passes");
        assertEquals(Outcome.PASS, pass.outcome());
        assertEquals("OBJ_99 PASS a note", pass.reportLine());
        CaseResult fail = run("fails");
        assertEquals("OBJ_99 FAIL expected 1 but was 2", fail.reportLine());
        assertEquals("OBJ_99 SKIP cannot do it", run("skips").reportLine());
        CaseResult other = run("throwsOther");
        assertEquals(Outcome.FAIL, other.outcome());
        assertTrue(other.reason().contains("IllegalStateException: boom"), other.reason());
    }

    @Test
    void aHangingCaseIsFailedInTime() throws Exception {
        long start = System.nanoTime();
        CaseResult r = run("hangs");
        assertEquals(Outcome.FAIL, r.outcome());
        assertTrue(r.reason().contains("did not end within"), r.reason());
        assertTrue(System.nanoTime() - start < 5_000_000_000L);
    }

    @Test
    void reportHasOneLinePerResult(@TempDir Path dir) throws IOException, NoSuchMethodException {
        Path report = dir.resolve("sub/none.txt");
        ConformanceKit.writeReport(report, List.of(run("passes"), run("skips")));
        assertEquals(List.of("OBJ_99 PASS a note", "OBJ_99 SKIP cannot do it"), Files.readAllLines(report));
    }
}
