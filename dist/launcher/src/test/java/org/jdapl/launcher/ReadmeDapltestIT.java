package org.jdapl.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dapltest section of the application's README works as written: every command a user types
 * there ({@code $ ./jdapl dapltest ...} in its {@code text} blocks) is run by {@code sh} after the
 * section's {@code sh} block (which writes the dat.conf of {@code emu-tcp} and exports
 * {@code DAT_OVERRIDE}), and what it prints (standard output and error, as a terminal shows them)
 * must have the shape of the README's sample (see {@link ReadmeSamplesIT#shape}; a sample line
 * {@code ...} stands for any lines). A block that starts the server ({@code -T S}) runs it as a
 * process of its own and its clients against it, one after another, with the README's address
 * replaced by the one the server prints (the README says to); the server's whole output is compared
 * once a client's {@code -T Q} stopped it. The blocks of the OFA provider's IAs are the Soft-RoCE
 * harness's ({@code scripts/rxe/guest-dapltest.sh}), not run here.
 */
class ReadmeDapltestIT {
    private static final Duration RUN = Duration.ofSeconds(120);
    private static final Path ROOT = Path.of(System.getProperty("jdapl.root")).toAbsolutePath().normalize();
    private static final Path README = ROOT.resolve("dist/README.md");
    private static final String PROMPT = "$ ";
    private static final Pattern CLIENTS = Pattern.compile("(?m)^dapltest server: run clients as: .* -s (\\S+) -D ");

    @TempDir
    Path work;

    /** One command of a block and the sample of what it prints. */
    record Command(String line, List<String> sample) {
        boolean server() {
            return line.contains(" dapltest -T S ");
        }
    }

    @Test
    void everyDapltestCommandOfTheApplicationReadmeRunsAsWrittenAndPrintsItsSample() throws Exception {
        List<String> section = section(Files.readAllLines(README), "### dapltest");
        String setup = String.join("\n", block(section, "```sh", "export DAT_OVERRIDE="));
        List<List<Command>> blocks = new ArrayList<>();
        for (List<Command> block : commandBlocks(section, "./jdapl dapltest ")) {
            if (!block.getFirst().line().contains("-D ofa-")) {
                blocks.add(block);
            }
        }
        List<List<Command>> withServer = blocks.stream().filter(b -> b.getFirst().server()).toList();
        assertEquals(1, withServer.size(), "the README's blocks that start a dapltest server: " + withServer);
        assertTrue(blocks.size() >= 3, "the README's dapltest blocks: " + blocks);

        // The blocks without a server do not depend on it: they run next to it, one after another.
        ExecutorService others = Executors.newSingleThreadExecutor();
        try {
            Future<?> rest = others.submit(() -> {
                for (List<Command> block : blocks) {
                    if (block != withServer.getFirst()) {
                        for (Command command : block) {
                            runAndCompare(work, setup, command, command.line());
                        }
                    }
                }
                return null;
            });
            runWithServer(setup, withServer.getFirst());
            rest.get(RUN.toSeconds() * 6, TimeUnit.SECONDS);
        } finally {
            others.shutdownNow();
        }
    }

    private void runWithServer(String setup, List<Command> block) throws Exception {
        Command server = block.getFirst();
        Matcher written = CLIENTS.matcher(String.join("\n", server.sample()));
        assertTrue(written.find(), "the README's server sample has no 'run clients as:' line: " + server.sample());
        String readmeAddress = written.group(1);
        try (Application.Running running = start(work, setup, server.line())) {
            String address = awaitAddress(running);
            for (Command client : block.subList(1, block.size())) {
                assertTrue(client.line().contains(" -s " + readmeAddress + " "), client.line());
                try {
                    runAndCompare(work, setup, client,
                            client.line().replace(" -s " + readmeAddress + " ", " -s " + address + " "));
                } catch (AssertionError e) {
                    // The server's side of the story: what it printed up to the client's failure.
                    e.addSuppressed(new AssertionError("the server so far:\n--- stdout\n" + running.out()
                            + "--- stderr\n" + running.err()));
                    throw e;
                }
            }
            Application.Result served = running.await(RUN);
            assertEquals(0, served.status(), served::toString);
            assertShape(server, served);
        }
    }

    /** Runs the README's {@code line} (or the line it says to type instead) and compares its output with the sample. */
    static void runAndCompare(Path work, String setup, Command command, String line) throws Exception {
        runAndCompare(work, setup, command, line, Map.of());
    }

    /** As {@link #runAndCompare(Path, String, Command, String)}, with extra environment entries. */
    static void runAndCompare(Path work, String setup, Command command, String line, Map<String, String> environment)
            throws Exception {
        Application.Result r;
        try (Application.Running running = start(work, setup, line, environment)) {
            r = running.await(RUN);
        }
        assertEquals(0, r.status(), () -> line + "\n" + r);
        assertShape(command, r);
        if (command.line().endsWith("; echo $?")) {
            // The status the README shows is the one the command returns, exactly.
            List<String> out = r.out().strip().lines().toList();
            assertEquals(command.sample().getLast(), out.getLast(), () -> line + "\n" + r);
        }
    }

    /** Starts {@code sh -c} with the setup and the README's line, standard error into standard output. */
    private static Application.Running start(Path work, String setup, String line) throws IOException {
        return start(work, setup, line, Map.of());
    }

    private static Application.Running start(Path work, String setup, String line, Map<String, String> environment)
            throws IOException {
        assertTrue(line.startsWith(PROMPT + "./jdapl "), line);
        String jdapl = "'" + ROOT.resolve("jdapl") + "'";
        String script = setup + "\n" + jdapl + line.substring(PROMPT.length() + "./jdapl".length());
        Map<String, String> env = new HashMap<>(environment);
        env.put("JDAPL_NO_BUILD", "1");
        env.put("JAVA_HOME", System.getProperty("java.home"));
        return Application.start(List.of("sh", "-c", "exec 2>&1\n" + script), env, work, null);
    }

    private static void assertShape(Command command, Application.Result r) {
        List<String> expected = ReadmeSamplesIT.shape(trim(command.sample()));
        List<String> actual = ReadmeSamplesIT.shape(trim(r.out().lines().toList()));
        if (!ReadmeSamplesIT.matches(expected, actual)) {
            assertEquals(String.join("\n", expected), String.join("\n", actual),
                    "the README's sample of '" + command.line() + "' and what it prints now differ in shape; it printed:\n"
                            + r.out());
            fail("'...' of the README's sample of '" + command.line() + "' matches nothing:\n" + r.out());
        }
    }

    private static List<String> trim(List<String> lines) {
        int end = lines.size();
        while (end > 0 && lines.get(end - 1).isBlank()) {
            end--;
        }
        return lines.subList(0, end);
    }

    private static String awaitAddress(Application.Running server) throws Exception {
        long deadline = System.nanoTime() + RUN.toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = CLIENTS.matcher(server.out());
            if (m.find()) {
                return m.group(1);
            }
            if (!server.process.isAlive()) {
                fail("the dapltest server ended before it listened:\n" + server.out());
            }
            Thread.sleep(100);
        }
        fail("the dapltest server did not listen within " + RUN + ":\n" + server.out());
        return null;
    }

    /** The lines from {@code heading} up to the next heading of its level or above. */
    static List<String> section(List<String> lines, String heading) {
        int start = lines.indexOf(heading);
        assertTrue(start >= 0, "no section " + heading);
        Pattern next = Pattern.compile("#{1," + heading.indexOf(' ') + "} .*");
        int end = start + 1;
        while (end < lines.size() && !next.matcher(lines.get(end)).matches()) {
            end++;
        }
        return lines.subList(start, end);
    }

    /** The lines of the first block opened by {@code fence} that holds a line starting with {@code holding}. */
    private static List<String> block(List<String> lines, String fence, String holding) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).equals(fence)) {
                int end = i + 1;
                while (end < lines.size() && !lines.get(end).equals("```")) {
                    end++;
                }
                List<String> body = lines.subList(i + 1, end);
                if (body.stream().anyMatch(l -> l.startsWith(holding))) {
                    return body;
                }
                i = end;
            }
        }
        throw new AssertionError("no " + fence + " block with a line " + holding);
    }

    /**
     * The {@code text} blocks whose first line is a command starting with {@code command} after the
     * prompt, each as its commands and their samples.
     */
    static List<List<Command>> commandBlocks(List<String> lines, String command) {
        List<List<Command>> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size() - 1; i++) {
            if (lines.get(i).equals("```text") && lines.get(i + 1).startsWith(PROMPT + command)) {
                List<Command> block = new ArrayList<>();
                int j = i + 1;
                while (j < lines.size() && !lines.get(j).equals("```")) {
                    String line = lines.get(j++);
                    List<String> sample = new ArrayList<>();
                    while (j < lines.size() && !lines.get(j).equals("```") && !lines.get(j).startsWith(PROMPT)) {
                        sample.add(lines.get(j++));
                    }
                    block.add(new Command(line, sample));
                }
                assertFalse(block.isEmpty());
                blocks.add(block);
                i = j;
            }
        }
        return blocks;
    }
}
