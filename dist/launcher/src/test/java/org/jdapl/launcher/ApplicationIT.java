package org.jdapl.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The application as users run it: started as a process with a command, it must start every
 * bundle, run the command and exit with its status.
 */
class ApplicationIT {
    private static final Duration RUN = Duration.ofSeconds(120);

    @TempDir
    Path work;

    private Application.Result run(String... args) throws Exception {
        return Application.run(work, Map.of(), RUN, args);
    }

    @Test
    void everyBundleResolvesAndStarts() throws Exception {
        Application.Result r = run("lb", "-s");
        assertEquals(0, r.status(), r::toString);
        for (String bsn : List.of("org.jdapl.api", "org.jdapl.registry", "org.jdapl.provider.emu",
                "org.jdapl.provider.ofa", "org.jdapl.tools", "org.apache.felix.scr", "org.apache.felix.configadmin",
                "org.apache.felix.gogo.runtime", "org.apache.felix.gogo.command", "org.apache.aries.spifly.dynamic.bundle",
                "slf4j.api", "slf4j.simple")) {
            assertTrue(Pattern.compile("\\|Active +\\|.*\\|" + Pattern.quote(bsn) + " ").matcher(r.out()).find(),
                    bsn + " is not active:\n" + r);
        }
        // The shell bundle is resolved (its resolution is checked) but started only without a command.
        assertTrue(Pattern.compile("\\|Resolved +\\|.*\\|org\\.apache\\.felix\\.gogo\\.jline ").matcher(r.out()).find(), r::toString);
        assertFalse(r.out().contains("conformance"), "the conformance kit is not part of the application");
        assertEquals("", r.err(), "nothing on standard error at the default log level");
    }

    @Test
    void providersListsTheDefaultIa() throws Exception {
        // The test's own empty dat.conf (Application.start), whatever the machine's /etc/dat.conf says.
        Application.Result r = run("providers");
        assertEquals(0, r.status(), r::toString);
        assertTrue(r.out().contains("file " + work.resolve(Application.EMPTY_DAT_CONF) + " (DAT_OVERRIDE)"),
                r::toString);
        assertTrue(Pattern.compile("(?m)^emu0 +u2\\.0 +emu +threadsafe +provider default \\(emu\\) +OPENABLE")
                .matcher(r.out()).find(), r::toString);
        assertTrue(r.out().contains("emu: 0 IAs open"), r::toString);
    }

    @Test
    void noSunMiscUnsafeWarningOnJava25() throws Exception {
        // Felix 7.0.5 tries sun.misc.Unsafe first (Java 24 and later warn about it); ./jdapl denies it,
        // and Felix then reaches URL's handler fields by reflection (java.net opened by the launcher
        // jar), which the shell needs for its bundle: URLs. A command, the shell and the script run
        // with nothing on standard error.
        Application.Result command = run("lb");
        Application.Result shell;
        try (Application.Running running = Application.start(Application.javaCommand(), Map.of(), work,
                "dat:list\n")) {
            shell = running.await(RUN);
        }
        Path root = Path.of(System.getProperty("jdapl.root")).toAbsolutePath().normalize();
        Application.Result script;
        try (Application.Running running = Application.start(List.of(root.resolve("jdapl").toString()),
                Map.of("JDAPL_NO_BUILD", "1", "JAVA_HOME", System.getProperty("java.home")), work, "dat:list\n")) {
            script = running.await(RUN);
        }
        for (Application.Result r : List.of(command, shell, script)) {
            assertEquals(0, r.status(), r::toString);
            assertFalse(r.out().contains("sun.misc.Unsafe") || r.err().contains("sun.misc.Unsafe"), r::toString);
            assertFalse(r.err().contains("Exception"), r::toString);
        }
        assertTrue(shell.out().contains("emu0") && script.out().contains("emu0"), shell + "\n" + script);
    }

    @Test
    void datOverrideSelectsTheConfiguration() throws Exception {
        Path conf = work.resolve("dat.conf");
        Files.writeString(conf, """
                # a test configuration
                emu-test u2.0 threadsafe default emu dapl.2.0 "loopback" ""
                """);
        Application.Result r = Application.run(work, Map.of("DAT_OVERRIDE", conf.toString()), RUN, "providers");
        assertEquals(0, r.status(), r::toString);
        assertTrue(r.out().contains("DAT_OVERRIDE"), r::toString);
        assertTrue(Pattern.compile("(?m)^emu-test +u2\\.0 +emu .*" + Pattern.quote(conf + ":2")).matcher(r.out()).find(),
                r::toString);
        Application.Result dtest = Application.run(work, Map.of("DAT_OVERRIDE", conf.toString()), RUN,
                "dtest", "-P", "emu-test", "-C");
        assertEquals(0, dtest.status(), dtest::toString);
        assertTrue(dtest.out().contains("IA emu-test"), dtest::toString);
    }

    @Test
    void unknownIaNameFailsWithAMessage() throws Exception {
        Application.Result r = run("dtest", "-P", "no-such-ia");
        assertEquals(1, r.status(), r::toString);
        assertTrue(r.err().contains("cannot open IA 'no-such-ia'"), r::toString);
        assertTrue(r.err().contains("DAT_NAME_NOT_REGISTERED"), r::toString);
        Application.Result d = run("dapltest", "-T", "T", "-D", "no-such-ia");
        assertEquals(1, d.status(), d::toString);
        assertTrue(d.err().contains("cannot open IA 'no-such-ia'"), d::toString);
    }

    @Test
    void badArgumentsFailWithUsage() throws Exception {
        Application.Result option = run("dtest", "-x");
        assertEquals(2, option.status(), option::toString);
        assertTrue(option.err().contains("dtest: unknown option -x"), option::toString);
        assertTrue(option.err().contains("usage: dtest"), option::toString);

        Application.Result number = run("dtest", "-b", "lots");
        assertEquals(2, number.status(), number::toString);
        assertTrue(number.err().contains("-b wants a number, not 'lots'"), number::toString);

        Application.Result both = run("dtest", "-s", "-h", "localhost");
        assertEquals(2, both.status(), both::toString);

        Application.Result test = run("dapltest");
        assertEquals(2, test.status(), test::toString);
        assertTrue(test.err().contains("dapltest: -T S|T|P|F|L|Q is required"), test::toString);

        Application.Result op = run("dapltest", "-T", "T", "client", "XX", "64");
        assertEquals(2, op.status(), op::toString);
        assertTrue(op.err().contains("unknown operation 'XX'"), op::toString);

        Application.Result command = run("frobnicate");
        assertEquals(2, command.status(), command::toString);
        assertTrue(command.err().contains("unknown command 'frobnicate'"), command::toString);

        Application.Result level = run("--log-level", "loud", "providers");
        assertEquals(2, level.status(), level::toString);
        assertTrue(level.err().contains("--log-level wants one of"), level::toString);

        Application.Result extra = run("providers", "now");
        assertEquals(2, extra.status(), extra::toString);
    }

    @Test
    void dtestSelfContainedPrintsItsFigures() throws Exception {
        Application.Result r = run("dtest", "-B", "50", "-V");
        assertEquals(0, r.status(), r::toString);
        for (String row : List.of("IA open", "PZ create", "EVD create", "LMR create", "EP create", "PSP create",
                "reject probe", "connect", "disconnect", "free objects", "IA close")) {
            assertTrue(Pattern.compile("(?m)^" + row + " +\\d").matcher(r.out()).find()
                    || Pattern.compile("(?m)^" + row + " +- +- +\\d").matcher(r.out()).find(), row + " missing:\n" + r);
        }
        assertTrue(Pattern.compile("(?m)^message round trip \\(64 B\\) +50 ").matcher(r.out()).find(), r::toString);
        assertTrue(Pattern.compile("(?m)^RDMA write \\(64 KiB\\) +50 .* MB/s$").matcher(r.out()).find(), r::toString);
        assertTrue(Pattern.compile("(?m)^RDMA read \\(64 KiB\\) +50 .* MB/s$").matcher(r.out()).find(), r::toString);
        assertTrue(r.out().contains("dtest: PASSED (data validated)"), r::toString);
    }

    @Test
    void dapltestTransactionTestWithValidationPasses() throws Exception {
        Application.Result r = run("dapltest", "-T", "T", "-V", "-t", "2", "-w", "2", "-i", "100",
                "client", "SR", "1024", "2", "server", "SR", "256", "client", "RW", "8192", "3", "server", "RR", "4096",
                "client", "RR", "16384", "4", "server", "RW", "512");
        assertEquals(0, r.status(), r::toString);
        assertTrue(Pattern.compile("(?m)^total +2400 ").matcher(r.out()).find(), r::toString);
        assertTrue(r.out().contains("dapltest: PASSED (data validated)"), r::toString);
    }

    @Test
    void dapltestPerformanceTestPrintsRateAndBandwidth() throws Exception {
        Application.Result r = run("dapltest", "-T", "P", "-i", "2000", "-p", "8", "RW", "4096");
        assertEquals(0, r.status(), r::toString);
        Matcher m = Pattern.compile("(?m)^client RW 4096 +2000 .* (\\d+)/s +([0-9.]+) MB/s$").matcher(r.out());
        assertTrue(m.find(), r::toString);
        assertTrue(Long.parseLong(m.group(1)) > 0, r::toString);
    }

    @Test
    void logGoesToTheChosenFileAtTheChosenLevel() throws Exception {
        Path log = work.resolve("jdapl.log");
        Application.Result r = run("--log-level", "debug", "--log-file", log.toString(), "dtest", "-C");
        assertEquals(0, r.status(), r::toString);
        String text = Files.readString(log);
        assertTrue(text.contains("DEBUG"), "no debug line in the log:\n" + text);
        assertFalse(r.out().contains("DEBUG"), r::toString);
    }

    /** What dist/README.md's "The shell" shows a user typing after {@code ./jdapl}, typed on standard input. */
    @Test
    void theShellRunsTheSameCommandsAsDat() throws Exception {
        Path root = Path.of(System.getProperty("jdapl.root")).toAbsolutePath().normalize();
        List<String> readme = Files.readAllLines(root.resolve("dist/README.md"));
        int block = -1;
        for (int i = 0; i + 1 < readme.size() && block < 0; i++) {
            if (readme.get(i).equals("```text") && readme.get(i + 1).equals("$ ./jdapl")) {
                block = i + 2;
            }
        }
        assertTrue(block > 0, "dist/README.md has no ```text block starting with '$ ./jdapl'");
        StringBuilder typed = new StringBuilder();
        for (int i = block; !readme.get(i).equals("```"); i++) {
            if (readme.get(i).startsWith("g! ")) {
                // What follows two spaces and a parenthesis is the README's comment, not typed.
                typed.append(readme.get(i).substring(3).replaceFirst(" {2,}\\(.*$", "")).append('\n');
            }
        }
        assertEquals("dat:dtest -C\ndat:list\nlb\nexit 0\n", typed.toString());
        List<String> command = List.of(root.resolve("jdapl").toString());
        try (Application.Running shell = Application.start(command,
                Map.of("JDAPL_NO_BUILD", "1", "JAVA_HOME", System.getProperty("java.home")), work, typed.toString())) {
            Application.Result r = shell.await(RUN);
            assertEquals(0, r.status(), r::toString);
            assertTrue(r.out().contains("Welcome to Apache Felix Gogo"), r::toString);
            assertTrue(r.out().contains("dtest: PASSED"), r::toString);
            assertTrue(r.out().contains("OPENABLE"), r::toString);
            assertTrue(r.out().contains("|Apache Felix Gogo Runtime ("), r::toString);
        }
    }

    @Test
    void theLauncherScriptRunsTheBuiltApplication() throws Exception {
        Path root = Path.of(System.getProperty("jdapl.root")).toAbsolutePath().normalize();
        List<String> command = List.of(root.resolve("jdapl").toString(), "providers");
        try (Application.Running script = Application.start(command,
                Map.of("JDAPL_NO_BUILD", "1", "JAVA_HOME", System.getProperty("java.home")), work, null)) {
            Application.Result r = script.await(RUN);
            assertEquals(0, r.status(), r::toString);
            assertTrue(r.out().contains("emu0"), r::toString);
        }
    }
}
