package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.After;
import org.junit.Test;

/**
 * The README's "What a Karaf user types", run as written: the shell blocks marked
 * {@code <!-- readme-test: karaf-... -->} in README.md are read from the file and run with
 * {@code sh -e} on Karaf's stock distribution (the tar.gz from Maven Central, a Maven dependency of
 * this module, in place of the README's {@code curl}). They run in a directory under {@code target/}
 * that stands for the checkout ({@code features} and {@code karaf-jdk25} link to this build's
 * modules), with {@code JAVA_HOME} this JVM's (a JDK 25).
 *
 * <p>What the test adds between the README's preparation and {@code bin/start}, so that it runs
 * beside other builds and never reads or writes {@code ~/.m2}: free loopback ports for SSH and RMI,
 * and Pax URL's local repository pointed at a private copy of this build's artifacts
 * ({@code target/jdapl-repository}) instead of {@code ~/.m2/repository}, where a user's
 * {@code ./mvnw -B install} puts them; third-party bundles come from the local repository Maven
 * filled, read as a remote one, then Maven Central.
 *
 * <p>It checks what {@code bin/client} prints for {@code dat:list}, {@code dat:dtest} and
 * {@code hc:exec jdapl}, then runs {@code bin/stop} and waits until Karaf's JVM is gone (and kills
 * it, failing, if it is not within 60 s).
 */
public class KarafReadmeIT {
    private static final Pattern MARKER = Pattern.compile("<!-- readme-test: (karaf-[a-z]+) -->");
    private static final long BLOCK_TIMEOUT_SECONDS = 240;

    private Path karafHome;

    @Test
    public void theReadmesKarafStepsRunOnTheStockDistribution() throws Exception {
        Map<String, String> blocks = shellBlocks(Path.of(JdaplContainerTest.requiredProperty("jdapl.readme")));
        assertEquals("the README's Karaf blocks", List.of("karaf-prepare", "karaf-start", "karaf-commands", "karaf-stop"),
                List.copyOf(blocks.keySet()));

        Path work = Path.of(JdaplContainerTest.requiredProperty("jdapl.itest.target"), "karaf-readme");
        deleteTree(work);
        Files.createDirectories(work);
        Path root = Path.of(JdaplContainerTest.requiredProperty("jdapl.root"));
        Files.createSymbolicLink(work.resolve("features"), root.resolve("features"));
        Files.createSymbolicLink(work.resolve("karaf-jdk25"), root.resolve("karaf-jdk25"));
        Path tarball = Path.of(JdaplContainerTest.requiredProperty("jdapl.karaf.tarball"));
        Files.copy(tarball, work.resolve(tarball.getFileName()));

        run(work, blocks.get("karaf-prepare"), "karaf-prepare");
        karafHome = work.resolve("apache-karaf-" + JdaplContainerTest.requiredProperty("karaf.version"));
        assertTrue(karafHome + " after the README's tar", Files.isDirectory(karafHome));
        isolate(karafHome, work);

        run(karafHome, blocks.get("karaf-start"), "karaf-start");
        String out = run(karafHome, blocks.get("karaf-commands"), "karaf-commands");
        Files.writeString(work.resolve("client-output.txt"), out);
        System.out.println(out);

        assertTrue("feature:repo-add:\n" + out, out.contains("Adding feature url mvn:org.jdapl/jdapl-features/"));
        assertTrue("dat:list shows emu0 OPENABLE:\n" + out, Pattern.compile("(?m)^emu0 +\\| u2\\.0 +\\| emu +\\|.*\\| OPENABLE +\\| ok")
                .matcher(out).find());
        assertTrue("dat:dtest:\n" + out, out.contains("dtest: IA emu0 (provider emu") && out.contains("RDMA write (64 KiB)")
                && out.contains("dtest: PASSED"));
        assertTrue("hc:exec jdapl:\n" + out, out.contains("Overall Health Result: OK")
                && Pattern.compile("(?m)^jdapl provider emu +OK ").matcher(out).find());
        assertTrue("Command not found (command ACLs):\n" + out, !out.contains("Command not found"));

        run(karafHome, blocks.get("karaf-stop"), "karaf-stop");
        List<ProcessHandle> left = awaitKarafGone(karafHome, 60);
        assertTrue("Karaf's JVM still runs 60 s after bin/stop: " + left, left.isEmpty());
        karafHome = null;
    }

    /** Kills a Karaf this test started and did not stop (a failed assertion). */
    @After
    public void killWhatIsLeft() {
        if (karafHome != null) {
            karafProcesses(karafHome).forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** The README's {@code sh} blocks after the markers, in order, by marker name. */
    static Map<String, String> shellBlocks(Path readme) throws IOException {
        List<String> lines = Files.readAllLines(readme);
        Map<String, String> blocks = new java.util.LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            var m = MARKER.matcher(lines.get(i).strip());
            if (!m.matches()) {
                continue;
            }
            int fence = i + 1;
            if (fence >= lines.size() || !lines.get(fence).strip().equals("```sh")) {
                throw new IllegalStateException(readme + ":" + (fence + 1) + ": no ```sh block after " + lines.get(i));
            }
            StringBuilder block = new StringBuilder();
            int j = fence + 1;
            for (; j < lines.size() && !lines.get(j).strip().equals("```"); j++) {
                block.append(lines.get(j)).append('\n');
            }
            blocks.put(m.group(1), block.toString());
            i = j;
        }
        return blocks;
    }

    /** Runs {@code block} with {@code sh -e} in {@code dir}; its standard output and error, together. */
    private static String run(Path dir, String block, String name) throws Exception {
        Path log = dir.resolve("../" + name + ".log").normalize();
        ProcessBuilder pb = new ProcessBuilder("sh", "-e", "-c", block).directory(dir.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(
                        new java.io.File("/dev/null")));
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().remove("EXTRA_JAVA_OPTS");
        pb.environment().remove("JAVA_OPTS");
        Process p = pb.start();
        if (!p.waitFor(BLOCK_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            fail("the README's block " + name + " did not end within " + BLOCK_TIMEOUT_SECONDS + " s:\n" + block
                    + "\noutput:\n" + Files.readString(log));
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertEquals("exit status of the README's block " + name + ":\n" + block + "\noutput:\n" + out, 0, p.exitValue());
        return out;
    }

    /**
     * What the test changes in the prepared Karaf so that it runs beside other builds: free loopback
     * ports, and a private local repository holding this build's artifacts.
     */
    private static void isolate(Path karaf, Path work) throws IOException {
        Path etc = karaf.resolve("etc");
        replace(etc.resolve("org.apache.karaf.shell.cfg"), Map.of(
                "sshPort = 8101", "sshPort = " + freePort(),
                "sshHost = 0.0.0.0", "sshHost = 127.0.0.1"));
        replace(etc.resolve("org.apache.karaf.management.cfg"), Map.of(
                "rmiRegistryPort = 1099", "rmiRegistryPort = " + freePort(),
                "rmiServerPort = 44444", "rmiServerPort = " + freePort()));
        Path repository = work.resolve("m2-repository");
        copyTree(Path.of(JdaplContainerTest.requiredProperty("jdapl.karaf.repository")), repository);
        String mavenLocal = Path.of(JdaplContainerTest.requiredProperty("jdapl.karaf.localRepository")).toUri()
                + "@id=maven.local";
        Files.writeString(etc.resolve("org.ops4j.pax.url.mvn.cfg"), "\n# KarafReadmeIT: a private local repository\n"
                + "org.ops4j.pax.url.mvn.localRepository = " + repository + "\n"
                + "org.ops4j.pax.url.mvn.repositories = " + mavenLocal + ", https://repo1.maven.org/maven2@id=central\n",
                java.nio.file.StandardOpenOption.APPEND);
    }

    private static void replace(Path file, Map<String, String> replacements) throws IOException {
        String text = Files.readString(file);
        for (var e : replacements.entrySet()) {
            if (!text.contains(e.getKey())) {
                throw new IllegalStateException(file + " has no line '" + e.getKey() + "'");
            }
            text = text.replace(e.getKey(), e.getValue());
        }
        Files.writeString(file, text);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JVMs whose command line names this Karaf's home. */
    private static List<ProcessHandle> karafProcesses(Path karaf) {
        String home = karaf.toAbsolutePath().toString();
        return ProcessHandle.allProcesses().filter(p -> p.pid() != ProcessHandle.current().pid())
                .filter(p -> p.info().commandLine().map(c -> c.contains("karaf.home=" + home)).orElse(false)
                        || cmdline(p).contains("karaf.home=" + home))
                .toList();
    }

    private static String cmdline(ProcessHandle p) {
        try (InputStream in = Files.newInputStream(Path.of("/proc", Long.toString(p.pid()), "cmdline"))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private static List<ProcessHandle> awaitKarafGone(Path karaf, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<ProcessHandle> left = karafProcesses(karaf);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(500);
            left = karafProcesses(karaf);
        }
        return left;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> all = new ArrayList<>();
        try (Stream<Path> files = Files.walk(dir)) {
            files.forEach(all::add);
        }
        all.sort(Comparator.reverseOrder());
        for (Path p : all) {
            Files.delete(p);
        }
    }
}
