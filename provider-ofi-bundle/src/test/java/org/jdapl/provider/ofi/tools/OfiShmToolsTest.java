package org.jdapl.provider.ofi.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdapl.provider.ofi.OfiHost;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * jdapl's dtest, dapltest and soak between two JVMs on a shm IA (libfabric's shm provider under the
 * connection protocol over RDM), with OFED's command lines as operators run them across processes
 * (the dat.conf line {@value #CONF_LINE}): a dtest server and its client; a dapltest server serving a
 * validated transaction test, a performance test and functional tests, stopped by {@code -T Q}; a
 * short soak whose serving JVM is killed and restarted among the API's faults, every DTO completing
 * exactly once. Every wait is bounded; every process is ended, and the shm regions of processes that
 * ended without closing their endpoints (a killed serving JVM) are removed.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class OfiShmToolsTest {
    static final String IA = "ofi-v2-shm";
    static final String CONF_LINE = IA + " u2.0 nonthreadsafe default libdaplofi.so.2 dapl.2.0 \"shm\" \"\"";
    private static final long RUN_SECONDS = 180;
    private static final Pattern LISTENING = Pattern.compile("listening at \\S*?/?(127\\.0\\.0\\.1):(\\d+)");

    @TempDir
    Path dir;
    private Path conf;
    private final List<Process> started = new ArrayList<>();
    private Set<String> regionsBefore;

    @BeforeEach
    void conf() throws IOException {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        conf = dir.resolve("dat.conf");
        Files.writeString(conf, CONF_LINE + "\n");
        regionsBefore = regions();
    }

    @AfterEach
    void end() throws Exception {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        // A killed JVM closes no endpoint: its regions stay behind. Those of ended processes that
        // appeared during the test go; a living process's are its own.
        for (String r : regions()) {
            if (!regionsBefore.contains(r) && ProcessHandle.of(pid(r)).map(h -> !h.isAlive()).orElse(true)) {
                Files.deleteIfExists(Path.of("/dev/shm", r));
            }
        }
    }

    @Test
    void dtestServerAndClientInTwoJvms() throws Exception {
        Tool server = start("dtest-server", "dtest", "-s", "-P", IA, "-W", "120");
        server.await(LISTENING);
        Tool client = start("dtest-client", "dtest", "-h", "127.0.0.1", "-P", IA, "-V");
        String c = client.end();
        assertTrue(c.contains("dtest: PASSED"), c);
        String s = server.end();
        assertTrue(s.contains("dtest: PASSED (server)"), s);
    }

    @Test
    void dapltestServerServesTransactionPerformanceAndFunctionalClientsUntilQuit() throws Exception {
        Tool server = start("dapltest-server", "dapltest", "-T", "S", "-D", IA);
        Matcher m = server.await(LISTENING);
        String s = m.group(1) + ":" + m.group(2);
        String t = start("dapltest-transaction", "dapltest", "-T", "T", "-s", s, "-D", IA, "-V", "-t", "2", "-w", "2",
                "-i", "50", "client", "SR", "256", "server", "SR", "256", "client", "RW", "4096", "2", "client", "RR",
                "4096").end();
        assertTrue(t.contains("dapltest: PASSED (data validated), the server's side too"), t);
        assertTrue(Pattern.compile("(?m)^total +\\d+ ").matcher(t).find(), t);
        String p = start("dapltest-performance", "dapltest", "-T", "P", "-s", s, "-D", IA, "-i", "1000", "RW",
                "65536", "2").end();
        assertTrue(p.contains("dapltest: PASSED"), p);
        for (String feature : List.of("connmgt", "dataxfer", "dataxfer_client")) {
            String f = start("dapltest-" + feature, "dapltest", "-T", "F", "-s", s, "-D", IA, "-f", feature).end();
            assertFalse(f.contains("Result: FAIL"), f);
            assertTrue(f.contains("dapltest: PASSED"), f);
        }
        start("dapltest-quit", "dapltest", "-T", "Q", "-s", s, "-D", IA).end();
        String out = server.end();
        assertFalse(out.contains("did not end"), out);
        assertFalse(out.contains("FAIL"), out);
    }

    @Test
    void soakWithTheServingJvmKilledAndRestarted() throws Exception {
        List<String> serve = java("soak", "--serve", "-D", IA);
        List<String> args = new ArrayList<>(List.of("soak", "-D", IA, "-n", "4000", "-c", "2", "-w", "4", "-m", "8k",
                "-f", "kill,epfree,abrupt,graceful,iaclose", "-i", "300", "-F", "1", "--"));
        args.addAll(serve);
        String out = start("soak", args.toArray(String[]::new)).end();
        assertTrue(out.contains("soak: PASSED"), out);
        for (String kind : List.of("kill", "epfree", "abrupt", "graceful", "iaclose")) {
            assertTrue(out.matches("(?s).*\\nfault " + kind + " +[1-9].*"), "no " + kind + " fault injected:\n" + out);
        }
    }

    /** A tool's JVM, its output (standard output and error) in a file. */
    private final class Tool {
        private final Process process;
        private final Path log;

        Tool(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        String out() throws IOException {
            return Files.readString(log, StandardCharsets.UTF_8);
        }

        /** The first match of {@code p} in the output, within 60 s. */
        Matcher await(Pattern p) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < end) {
                Matcher m = p.matcher(out());
                if (m.find()) {
                    return m;
                }
                if (!process.isAlive()) {
                    throw new AssertionError("ended (exit " + process.exitValue() + ") before " + p + ":\n" + out());
                }
                Thread.sleep(100);
            }
            throw new AssertionError("no " + p + " within 60 s:\n" + out());
        }

        /** Waits for the JVM's end (at most {@value #RUN_SECONDS} s) and its status 0: the output. */
        String end() throws Exception {
            boolean ended = process.waitFor(RUN_SECONDS, TimeUnit.SECONDS);
            String out = out();
            assertTrue(ended, "did not end within " + RUN_SECONDS + " s:\n" + out);
            assertEquals(0, process.exitValue(), out);
            return out;
        }
    }

    private Tool start(String name, String... toolArgs) throws IOException {
        Path log = dir.resolve(name + ".txt");
        Process p = new ProcessBuilder(java(toolArgs)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        started.add(p);
        return new Tool(p, log);
    }

    /** The command line of a tool's JVM on this test's class path. */
    private List<String> java(String... toolArgs) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED",
                "-Ddat.conf=" + conf, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        String keepalive = System.getProperty("jdapl.ofi.rdm.keepaliveMillis");
        if (keepalive != null) {
            cmd.add("-Djdapl.ofi.rdm.keepaliveMillis=" + keepalive); // the tests' bound: a killed peer ends sooner
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ToolMain.class.getName()));
        cmd.addAll(List.of(toolArgs));
        return cmd;
    }

    private static Set<String> regions() throws IOException {
        Set<String> names = new HashSet<>();
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(shm, "jdapl_*")) {
                s.forEach(p -> names.add(p.getFileName().toString()));
            }
        }
        return names;
    }

    private static long pid(String region) {
        String[] f = region.split("_");
        try {
            return f.length >= 3 ? Long.parseLong(f[1]) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
