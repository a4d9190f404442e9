package org.jdapl.conformance.emu.tcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Network namespaces a test creates and removes: {@code ip netns} and {@code ip link} run as root.
 * Traffic of the peers in them never leaves the namespaces.
 */
final class Netns implements AutoCloseable {
    private final List<String> names = new ArrayList<>();
    private final List<String> links = new ArrayList<>();

    /** Why namespaces cannot be made here, or null if they can. */
    static String unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "network namespaces need root";
        }
        String probe = "jdapl-probe-" + ProcessHandle.current().pid();
        try {
            run("ip", "netns", "add", probe);
            run("ip", "netns", "del", probe);
            return null;
        } catch (IOException e) {
            return "cannot create a network namespace: " + e.getMessage();
        }
    }

    /** Creates a namespace with its loopback up. */
    String add(String base) throws IOException {
        String name = base + "-" + ProcessHandle.current().pid();
        run("ip", "netns", "add", name);
        names.add(name);
        run("ip", "-n", name, "link", "set", "lo", "up");
        return name;
    }

    /** A veth pair between two namespaces, addressed {@code ipA}/24 and {@code ipB}/24, up. */
    void veth(String nsA, String ipA, String nsB, String ipB) throws IOException {
        String a = "jv" + (ProcessHandle.current().pid() % 100000) + "a" + links.size();
        String b = "jv" + (ProcessHandle.current().pid() % 100000) + "b" + links.size();
        run("ip", "link", "add", a, "type", "veth", "peer", "name", b);
        links.add(a);
        run("ip", "link", "set", a, "netns", nsA);
        run("ip", "link", "set", b, "netns", nsB);
        run("ip", "-n", nsA, "addr", "add", ipA + "/24", "dev", a);
        run("ip", "-n", nsB, "addr", "add", ipB + "/24", "dev", b);
        run("ip", "-n", nsA, "link", "set", a, "up");
        run("ip", "-n", nsB, "link", "set", b, "up");
    }

    /** The veth end of pair {@code index} in its namespace, as {@link #veth} named it. */
    static String vethName(int index, boolean first) {
        return "jv" + (ProcessHandle.current().pid() % 100000) + (first ? "a" : "b") + index;
    }

    static void run(String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not end within 10 s");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted", e);
        }
    }

    @Override
    public void close() {
        for (String n : names) {
            try {
                run("ip", "netns", "del", n);
            } catch (IOException e) {
                System.err.println("removing namespace " + n + ": " + e.getMessage());
            }
        }
        names.clear();
    }
}
