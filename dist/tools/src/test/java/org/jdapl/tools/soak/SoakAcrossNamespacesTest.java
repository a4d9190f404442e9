package org.jdapl.tools.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The soak run across two network namespaces joined by a veth pair, the way a user runs it between
 * hosts: the driving JVM in one namespace, the serving JVM (which the run kills and restarts) in the
 * other, every fault kind injected in turn: SIGKILL, the link down within and beyond the keepalive
 * bound, netem loss, duplication, reordering and delay, EP free, abrupt and graceful disconnects
 * racing posts, and the serving IA closed with DTOs in flight. Every posted DTO must complete exactly
 * once, every byte that comes back must be what was sent, no canary may change and no connection may
 * stall.
 *
 * <p>Sized by system properties for the long run: {@code jdapl.soak.operations} (default 100000),
 * {@code jdapl.soak.interval} (mean milliseconds between faults, default 60), {@code jdapl.soak.timeout}
 * (seconds, default 900), {@code jdapl.soak.seed} (default 1), {@code jdapl.soak.faults} (default all),
 * {@code jdapl.soak.minFaults} (the run goes on until every kind was injected this often, default 1).
 */
class SoakAcrossNamespacesTest {
    private static final String ALL_FAULTS =
            "kill,linkblip,linkcut,loss,duplicate,reorder,delay,epfree,abrupt,graceful,iaclose";

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 2, unit = TimeUnit.HOURS)
    void everyDtoCompletesExactlyOnceAndNoByteIsWrongUnderEveryFaultKind() throws Exception {
        String why = Namespaces.unavailable();
        assumeTrue(why == null, why);
        try (Namespaces ns = new Namespaces()) {
            String a = ns.add("soak-a");
            String b = ns.add("soak-b");
            int net = 100 + (int) (ProcessHandle.current().pid() % 100);
            String ipA = "10.254." + net + ".1";
            String ipB = "10.254." + net + ".2";
            String devA = ns.veth(a, ipA, b, ipB);
            Path conf = dir.resolve("dat.conf");
            Files.writeString(conf, "soak-a u2.0 threadsafe default emu emu.1.0 \"tcp " + ipA + ":0\" \"\"\n"
                    + "soak-b u2.0 threadsafe default emu emu.1.0 \"tcp " + ipB + ":7471\" \"\"\n");
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", a));
            cmd.addAll(java(conf, "-XX:NativeMemoryTracking=summary"));
            cmd.addAll(List.of("-D", "soak-a", "-s", System.getProperty("jdapl.soak.seed", "1"),
                    "-n", System.getProperty("jdapl.soak.operations", "100000"),
                    "-i", System.getProperty("jdapl.soak.interval", "60"),
                    "-F", System.getProperty("jdapl.soak.minFaults", "1"),
                    "-f", System.getProperty("jdapl.soak.faults", ALL_FAULTS), "--dev", devA, "--"));
            cmd.addAll(List.of("ip", "netns", "exec", b));
            cmd.addAll(java(conf));
            cmd.addAll(List.of("--serve", "-D", "soak-b"));
            Path log = dir.resolve("soak.txt");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            long timeout = Long.getLong("jdapl.soak.timeout", 900);
            boolean ended = p.waitFor(timeout, TimeUnit.SECONDS);
            if (!ended) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            Path report = Path.of("target", "soak", "netns.txt");
            Files.createDirectories(report.getParent());
            Files.writeString(report, out);
            System.out.println(out);
            assertTrue(ended, "the soak run did not end within " + timeout + " s:\n" + out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("soak: PASSED"), out);
            for (String kind : System.getProperty("jdapl.soak.faults", ALL_FAULTS).split(",")) {
                assertTrue(out.matches("(?s).*\\nfault " + kind + " +[1-9].*"), "no " + kind + " fault injected:\n" + out);
            }
        }
    }

    /** The java command line of a soak JVM on this test's class path. */
    static List<String> java(Path conf, String... options) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Ddat.conf=" + conf);
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=error");
        cmd.addAll(List.of(options));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(SoakMain.class.getName());
        return cmd;
    }

    /** Network namespaces this test creates and removes ({@code ip netns}, as root). */
    static final class Namespaces implements AutoCloseable {
        private final List<String> names = new ArrayList<>();
        private int links;

        static String unavailable() {
            if (!"root".equals(System.getProperty("user.name"))) {
                return "network namespaces need root";
            }
            try {
                Path script = Path.of(System.getProperty("user.dir")).resolve("../../scripts/soak/install-host-packages.sh");
                Process install = new ProcessBuilder("bash", script.normalize().toString()).inheritIO().start();
                if (!install.waitFor(15, TimeUnit.MINUTES) || install.exitValue() != 0) {
                    install.destroyForcibly();
                    return "ip, tc and nft could not be installed (scripts/soak/install-host-packages.sh)";
                }
                String probe = "sp" + ProcessHandle.current().pid();
                Injector.run("ip", "netns", "add", probe);
                Injector.run("ip", "netns", "del", probe);
                return null;
            } catch (IOException e) {
                return "network namespaces are not available: " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }

        String add(String base) throws IOException {
            String name = base + "-" + ProcessHandle.current().pid();
            Injector.run("ip", "netns", "add", name);
            names.add(name);
            Injector.run("ip", "-n", name, "link", "set", "lo", "up");
            return name;
        }

        /** A veth pair between two namespaces, addressed and up; returns the name of the end in {@code nsA}. */
        String veth(String nsA, String ipA, String nsB, String ipB) throws IOException {
            String tag = "sk" + (ProcessHandle.current().pid() % 100000) + "x" + links++;
            String a = tag + "a";
            String b = tag + "b";
            Injector.run("ip", "link", "add", a, "type", "veth", "peer", "name", b);
            Injector.run("ip", "link", "set", a, "netns", nsA);
            Injector.run("ip", "link", "set", b, "netns", nsB);
            Injector.run("ip", "-n", nsA, "addr", "add", ipA + "/24", "dev", a);
            Injector.run("ip", "-n", nsB, "addr", "add", ipB + "/24", "dev", b);
            Injector.run("ip", "-n", nsA, "link", "set", a, "up");
            Injector.run("ip", "-n", nsB, "link", "set", b, "up");
            return a;
        }

        @Override
        public void close() {
            for (String n : names) {
                try {
                    Injector.run("ip", "netns", "del", n);
                } catch (IOException e) {
                    System.err.println("removing namespace " + n + ": " + e.getMessage());
                }
            }
        }
    }
}
