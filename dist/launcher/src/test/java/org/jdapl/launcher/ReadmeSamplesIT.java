package org.jdapl.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jdapl.tools.ToolCommands;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tools' samples in the READMEs are what the commands print today: each command a README shows
 * with its output is run through {@code ./jdapl} (the script users run, on the built application)
 * and its output must have the sample's shape: the same lines, words and columns, with any number
 * (figures, addresses, times in any unit, sizes) standing for any other.
 */
class ReadmeSamplesIT {
    private static final Duration RUN = Duration.ofSeconds(120);
    private static final Path ROOT = Path.of(System.getProperty("jdapl.root")).toAbsolutePath().normalize();

    @TempDir
    Path work;

    @Test
    void helpListsEveryCommand() throws Exception {
        Application.Result r = jdapl("--help");
        assertEquals(0, r.status(), r::toString);
        List<String> commands = new ArrayList<>(ToolCommands.NAMES);
        commands.add("providers");
        for (String command : commands) {
            assertTrue(Pattern.compile("(?m)^ +" + command + " ").matcher(r.out()).find(),
                    "./jdapl --help does not list " + command + ":\n" + r.out());
        }
    }

    @Test
    void providersPrintsWhatTheApplicationReadmeShows() throws Exception {
        // The sample is of a host without /etc/dat.conf and without an RDMA device.
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.exists(Path.of("/etc/dat.conf")), "/etc/dat.conf exists");
        String[] devices = Path.of("/sys/class/infiniband").toFile().list();
        org.junit.jupiter.api.Assumptions.assumeTrue(devices == null || devices.length == 0, "an RDMA device is present");
        Application.Result r = jdapl(Application.AS_TYPED, "providers");
        assertEquals(0, r.status(), r::toString);
        assertShape(sample(ROOT.resolve("dist/README.md"), "$ ./jdapl providers"), r);
    }

    @Test
    void dtestPrintsWhatBothReadmesShow() throws Exception {
        Application.Result r = jdapl("dtest");
        assertEquals(0, r.status(), r::toString);
        assertShape(sample(ROOT.resolve("README.md"), "$ ./jdapl dtest"), r);
        assertShape(sample(ROOT.resolve("dist/README.md"), "$ ./jdapl dtest"), r);
    }

    @Test
    void soakPrintsWhatTheApplicationReadmeShows() throws Exception {
        assertShape(sample(ROOT.resolve("dist/README.md"), "$ ./jdapl soak -n 200000 -i 20"), "soak", "-n", "200000",
                "-i", "20");
    }

    @Test
    void errorsPrintWhatTheApplicationReadmeShows() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.exists(Path.of("/etc/dat.conf")), "/etc/dat.conf exists");
        List<String> section = ReadmeDapltestIT.section(Files.readAllLines(ROOT.resolve("dist/README.md")), "### Errors");
        List<List<ReadmeDapltestIT.Command>> blocks = ReadmeDapltestIT.commandBlocks(section, "./jdapl ");
        assertEquals(1, blocks.size(), blocks::toString);
        for (ReadmeDapltestIT.Command command : blocks.getFirst()) {
            ReadmeDapltestIT.runAndCompare(work, "", command, command.line(), Application.AS_TYPED);
        }
    }

    private Application.Result jdapl(String... args) throws Exception {
        return jdapl(Map.of(), args);
    }

    /** Runs the jdapl script with {@code args} and extra environment entries. */
    private Application.Result jdapl(Map<String, String> environment, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("jdapl").toString()));
        command.addAll(List.of(args));
        Map<String, String> env = new HashMap<>(environment);
        env.put("JDAPL_NO_BUILD", "1");
        env.put("JAVA_HOME", System.getProperty("java.home"));
        try (Application.Running script = Application.start(command, env, work, null)) {
            return script.await(RUN);
        }
    }

    private void assertShape(List<String> sample, String... args) throws Exception {
        Application.Result r = jdapl(args);
        assertEquals(0, r.status(), r::toString);
        assertShape(sample, r);
    }

    private static void assertShape(List<String> sample, Application.Result r) {
        List<String> expected = shape(sample);
        List<String> actual = shape(r.out().lines().toList());
        if (!matches(expected, actual)) {
            assertEquals(String.join("\n", expected), String.join("\n", actual),
                    "the README's sample and what the command prints now differ in shape; it printed:\n" + r.out());
        }
    }

    /**
     * The output of the README's {@code text} block that starts with the line {@code $ command}
     * (without that line), up to the block's end or the next {@code $ } line.
     */
    static List<String> sample(Path readme, String command) throws IOException {
        List<String> lines = Files.readAllLines(readme);
        for (int i = 0; i < lines.size() - 1; i++) {
            if (lines.get(i).equals("```text") && lines.get(i + 1).equals(command)) {
                List<String> out = new ArrayList<>();
                for (int j = i + 2; j < lines.size() && !lines.get(j).equals("```") && !lines.get(j).startsWith("$ "); j++) {
                    out.add(lines.get(j));
                }
                return out;
            }
        }
        throw new AssertionError(readme + " has no ```text block starting with '" + command + "'");
    }

    /**
     * Whether {@code actual} has the shape {@code sample}, where a sample line {@code ...} stands for any
     * lines and {@code ...} within a line for any text.
     */
    static boolean matches(List<String> sample, List<String> actual) {
        return matches(sample, 0, actual, 0);
    }

    private static boolean matches(List<String> sample, int s, List<String> actual, int a) {
        if (s == sample.size()) {
            return a == actual.size();
        }
        if (sample.get(s).equals("...")) {
            for (int skip = a; skip <= actual.size(); skip++) {
                if (matches(sample, s + 1, actual, skip)) {
                    return true;
                }
            }
            return false;
        }
        return a < actual.size() && lineMatches(sample.get(s), actual.get(a)) && matches(sample, s + 1, actual, a + 1);
    }

    /** A sample line matches the same line, or, where it elides with {@code ...}, a line with anything there. */
    private static boolean lineMatches(String sample, String actual) {
        if (!sample.contains("...")) {
            return sample.equals(actual);
        }
        List<String> parts = new ArrayList<>();
        for (String part : sample.split("\\.\\.\\.", -1)) {
            parts.add(Pattern.quote(part));
        }
        return actual.matches(String.join(".*", parts));
    }

    /**
     * A line's shape: numbers become {@code #} (with their unit of time or size, which varies with
     * the figure), a rule of dashes becomes {@code ---}, runs of spaces one space.
     */
    static List<String> shape(List<String> lines) {
        List<String> shape = new ArrayList<>();
        for (String line : lines) {
            String s = line.replaceAll("\\(\\d+ found no connection\\)", "")
                    .replaceAll("\\d+(\\.\\d+)?( ?(ns|us|ms|s|B|KiB|MiB|GiB))?(?![\\w/])", "#")
                    .replaceAll("\\d+", "#")
                    .replaceAll("-{3,}", "---")
                    .replaceAll("\\s+", " ")
                    .strip();
            shape.add(s);
        }
        return shape;
    }
}
