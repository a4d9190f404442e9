package org.jdapl.tools.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.ToolException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** soak in this process: both sides on one fabric, faults through the public API. */
@Timeout(300)
class SoakTest {
    @TempDir
    Path dir;

    private static String run(DatRegistry registry, String... args) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            new Soak(registry, out, new ByteArrayInputStream(new byte[0])).run(List.of(args));
        } catch (ToolException e) {
            throw new AssertionError(e.getMessage() + "\n" + bytes.toString(StandardCharsets.UTF_8), e);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static long row(String out, String measure) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(measure) + " +(\\d+)").matcher(out);
        assertTrue(m.find(), "no row '" + measure + "' in\n" + out);
        return Long.parseLong(m.group(1));
    }

    /** The accounts of a passed run: every posted DTO completed once, OK or flushed, and every must-be-0 is 0. */
    private static void assertAccountsBalance(String out, long operations) {
        assertTrue(out.contains("soak: PASSED"), out);
        long posted = row(out, "DTOs posted");
        assertTrue(posted >= operations, out);
        assertEquals(0, row(out, "completed twice"), out);
        assertEquals(0, row(out, "never completed"), out);
        assertEquals(0, row(out, "corrupt"), out);
        assertEquals(0, row(out, "canaries damaged"), out);
        assertEquals(0, row(out, "stalled connections"), out);
        long errors = 0;
        Matcher m = Pattern.compile("(?m)^completed (?!OK )[A-Z_]+ +(\\d+)").matcher(out);
        while (m.find()) {
            errors += Long.parseLong(m.group(1));
        }
        assertEquals(posted, row(out, "completed OK") + row(out, "flushed") + errors, out);
        assertTrue(row(out, "bytes verified") > 0, out);
    }

    /**
     * A long run shows where it is while it runs: a progress line with the elapsed time, the DTOs
     * posted and their rate, completions, faults and reconnections, on its own stream (standard error
     * in the tool), never in the results.
     */
    @Test
    void aRunPrintsProgressWhileItRuns() {
        ByteArrayOutputStream results = new ByteArrayOutputStream();
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(results, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(progress, true, StandardCharsets.UTF_8)) {
            new Soak(DatRegistry.standalone(), out, new ByteArrayInputStream(new byte[0]), err, 50)
                    .run(List.of("-D", "emu0", "-t", "3", "-c", "2", "-i", "50", "-f", "epfree,abrupt"));
        }
        String lines = progress.toString(StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("(?m)^soak: \\d+ s, (\\d+) DTOs posted \\((\\d+)/s\\), (\\d+) completed, (\\d+) faults, "
                + "(\\d+) reconnections$").matcher(lines);
        int count = 0;
        long lastPosted = -1;
        while (m.find()) {
            count++;
            long posted = Long.parseLong(m.group(1));
            assertTrue(posted >= lastPosted, lines);
            lastPosted = posted;
        }
        assertTrue(count >= 2, "progress lines of a 3 s run every 50 ms:\n" + lines);
        assertTrue(lastPosted > 0, lines);
        String out = results.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("soak: PASSED") && !out.contains("DTOs posted ("), "the results hold no progress:\n" + out);
        // The resource table says what its rows are, and how to turn native memory tracking on.
        assertTrue(Pattern.compile("(?m)^native memory \\(NMT committed\\) +off +off +on with the JVM option "
                + "-XX:NativeMemoryTracking=summary").matcher(out).find(), out);
        assertTrue(Pattern.compile("(?m)^direct buffers .*NIO direct buffers: 128 KiB per open tcp-fabric connection").matcher(out).find(), out);
    }

    @Test
    void everyDtoCompletesExactlyOnceOnLoopbackUnderApiFaults() {
        String out = run(DatRegistry.standalone(), "-D", "emu0", "-n", "20000", "-c", "6", "-i", "20", "-F", "5",
                "-f", "epfree,abrupt,graceful,iaclose");
        assertAccountsBalance(out, 20_000);
        for (String kind : List.of("epfree", "abrupt", "graceful", "iaclose")) {
            assertTrue(row(out, "fault " + kind) > 0, out);
        }
        assertTrue(row(out, "reconnections") > 0, out);
    }

    @Test
    void everyDtoCompletesExactlyOnceOnTcpUnderApiFaults() throws Exception {
        Path conf = dir.resolve("dat.conf");
        Files.writeString(conf, "soak-tcp u2.0 threadsafe default emu emu.1.0 \"tcp 127.0.0.1:0\" \"\"\n");
        String previous = System.setProperty("dat.conf", conf.toString());
        try {
            String out = run(DatRegistry.standalone(), "-D", "soak-tcp", "-n", "40000", "-s", "7", "-i", "20", "-F", "5",
                    "-f", "epfree,abrupt,graceful,iaclose");
            assertAccountsBalance(out, 40_000);
            assertTrue(row(out, "flushed") > 0, out);
        } finally {
            if (previous == null) {
                System.clearProperty("dat.conf");
            } else {
                System.setProperty("dat.conf", previous);
            }
        }
    }

    /**
     * Many short connections that stream at once after abrupt ends: the emulated tcp fabric used to
     * copy every payload of a connection a few bytes off when a partial header was buffered as its input
     * buffer grew at establishment (WireOrderTest has the exact case); RDMA Reads then returned the
     * written pattern displaced.
     */
    @Test
    void rdmaReadsReturnWhatTheWriteBeforeThemWroteAfterAbruptEndsOfConnections() throws Exception {
        Path conf = dir.resolve("dat.conf");
        Files.writeString(conf, "soak-tcp u2.0 threadsafe default emu emu.1.0 \"tcp 127.0.0.1:0\" \"\"\n");
        String previous = System.setProperty("dat.conf", conf.toString());
        try {
            String out = run(DatRegistry.standalone(), "-D", "soak-tcp", "-c", "2", "-n", "100000", "-s", "4",
                    "-i", "5", "-F", "40", "-f", "epfree,abrupt,iaclose");
            assertAccountsBalance(out, 100_000);
            assertTrue(row(out, "reconnections") >= 100, out);
        } finally {
            if (previous == null) {
                System.clearProperty("dat.conf");
            } else {
                System.setProperty("dat.conf", previous);
            }
        }
    }

    @Test
    void withoutFaultsEveryDtoCompletesOk() {
        String out = run(DatRegistry.standalone(), "-n", "5000", "-f", "none", "-m", "64");
        assertAccountsBalance(out, 5000);
        assertEquals(row(out, "DTOs posted"), row(out, "completed OK"), out);
        assertEquals(0, row(out, "reconnections"), out);
    }

    @Test
    void faultsThatNeedAPeerOrADeviceAreRefusedWithoutThem() {
        DatRegistry registry = DatRegistry.standalone();
        ToolException kill = assertThrows(ToolException.class, () -> new Soak(registry, System.out, System.in)
                .run(List.of("-f", "kill")));
        assertEquals(ToolException.USAGE, kill.status());
        assertTrue(kill.getMessage().contains("needs a peer command"), kill.getMessage());
        ToolException loss = assertThrows(ToolException.class, () -> new Soak(registry, System.out, System.in)
                .run(List.of("-f", "loss")));
        assertTrue(loss.getMessage().contains("needs --dev"), loss.getMessage());
        ToolException unknown = assertThrows(ToolException.class, () -> new Soak(registry, System.out, System.in)
                .run(List.of("-f", "meteor")));
        assertTrue(unknown.getMessage().contains("unknown fault 'meteor'"), unknown.getMessage());
    }

    @Test
    void serveAnnouncesItsAddressAndReportsWhenStdinEnds() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            new Soak(DatRegistry.standalone(), out, new ByteArrayInputStream("reopen\n".getBytes(StandardCharsets.US_ASCII)))
                    .run(List.of("--serve", "-q", "77"));
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(2, out.lines().filter(l -> l.matches("soak: serving \\S+ 77")).count(), out);
        assertTrue(out.contains("soak: served 0 connections, 0 canaries damaged"), out);
    }
}
