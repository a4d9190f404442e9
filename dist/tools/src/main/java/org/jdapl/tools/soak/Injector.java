package org.jdapl.tools.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fault schedule: one thread that, after a random pause (exponential, mean {@code -i}), injects
 * the next fault kind of the list in turn, so that every kind is injected about as often as the
 * others. Link and netem faults run {@code ip} and {@code tc} on the device given.
 */
final class Injector implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Injector.class);
    /** Where Debian installs administration programs such as {@code tc} and {@code nft}. */
    private static final List<String> SBIN = List.of("/usr/local/sbin", "/usr/sbin", "/sbin");

    private final SoakOptions options;
    private final List<Stream> streams;
    private final Runnable reopenServer;
    private final Runnable killServer;
    private final Random random;
    private final Map<FaultKind, LongAdder> injected = new EnumMap<>(FaultKind.class);
    private final Map<FaultKind, LongAdder> missed = new EnumMap<>(FaultKind.class);
    private volatile boolean stopped;
    private volatile String failure;
    private volatile Boolean netem;

    Injector(SoakOptions options, List<Stream> streams, Runnable reopenServer, Runnable killServer) {
        this.options = options;
        this.streams = streams;
        this.reopenServer = reopenServer;
        this.killServer = killServer;
        this.random = new Random(options.seed() ^ 0xFA17L);
        for (FaultKind k : FaultKind.values()) {
            injected.put(k, new LongAdder());
            missed.put(k, new LongAdder());
        }
    }

    void stop() {
        stopped = true;
    }

    long injected(FaultKind kind) {
        return injected.get(kind).sum();
    }

    long missed(FaultKind kind) {
        return missed.get(kind).sum();
    }

    /** Whether every kind of the schedule was injected at least {@code n} times. */
    boolean reached(long n) {
        return options.faults().stream().allMatch(k -> injected(k) >= n);
    }

    long total() {
        return injected.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** Why injecting stopped early (a command that failed), or null. */
    String failure() {
        return failure;
    }

    @Override
    public void run() {
        List<FaultKind> kinds = options.faults();
        int next = 0;
        while (!stopped && !kinds.isEmpty() && failure == null) {
            long pause = (long) (-Math.log(1 - random.nextDouble()) * options.intervalMillis());
            if (!sleep(Math.min(pause, 10 * Math.max(1, options.intervalMillis())))) {
                return;
            }
            if (stopped) {
                return;
            }
            FaultKind kind = kinds.get(next++ % kinds.size());
            try {
                if (inject(kind)) {
                    injected.get(kind).increment();
                } else {
                    missed.get(kind).increment();
                }
            } catch (IOException | RuntimeException e) {
                if (stopped) {
                    return;
                }
                failure = kind.option() + ": " + e.getMessage();
                LOG.warn("soak: fault {} could not be injected", kind, e);
            }
        }
    }

    private boolean inject(FaultKind kind) throws IOException {
        String dev = options.device();
        switch (kind) {
            case EPFREE, ABRUPT, GRACEFUL -> {
                Stream.Fault f = Stream.Fault.valueOf(kind == FaultKind.EPFREE ? "EP_FREE" : kind.name());
                for (int tries = 0; tries < streams.size(); tries++) {
                    if (streams.get(random.nextInt(streams.size())).inflict(f)) {
                        return true;
                    }
                }
                return false;
            }
            case IACLOSE -> reopenServer.run();
            case KILL -> killServer.run();
            case LINKBLIP -> {
                run("ip", "link", "set", "dev", dev, "down");
                sleep(200 + random.nextInt(1000));
                run("ip", "link", "set", "dev", dev, "up");
            }
            case LINKCUT -> {
                run("ip", "link", "set", "dev", dev, "down");
                sleep(options.cutMillis());
                run("ip", "link", "set", "dev", dev, "up");
            }
            case LOSS -> {
                int percent = 5 + random.nextInt(26);
                if (netem()) {
                    netem("loss", percent + "%");
                } else {
                    nft(List.of("oifname " + dev + " numgen random mod 100 < " + percent + " drop",
                            "iifname " + dev + " numgen random mod 100 < " + percent + " drop"), true);
                }
            }
            case DUPLICATE -> {
                int percent = 5 + random.nextInt(46);
                if (netem()) {
                    netem("duplicate", percent + "%");
                } else {
                    nft(List.of("oifname " + dev + " numgen random mod 100 < " + percent + " dup to ip daddr device "
                            + dev), false);
                }
            }
            case REORDER -> {
                int percent = 10 + random.nextInt(41);
                if (netem()) {
                    netem("delay", "5ms", "reorder", percent + "%", "50%");
                } else {
                    reorderWithoutNetem(percent);
                }
            }
            case DELAY -> {
                if (netem()) {
                    netem("delay", (10 + random.nextInt(91)) + "ms", (1 + random.nextInt(20)) + "ms");
                } else {
                    // Queueing delay: a token bucket of a few Mbit/s holds the stream's packets back.
                    run("tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", (1 + random.nextInt(8)) + "mbit",
                            "burst", "16kb", "latency", "400ms");
                    hold(() -> run("tc", "qdisc", "del", "dev", dev, "root"));
                }
            }
        }
        return true;
    }

    /** Whether the kernel has netem (sch_netem); without it, nftables and other qdiscs stand in. */
    private boolean netem() throws IOException {
        if (netem == null) {
            try {
                run("tc", "qdisc", "replace", "dev", options.device(), "root", "netem", "delay", "0ms");
                run("tc", "qdisc", "del", "dev", options.device(), "root");
                netem = true;
            } catch (IOException e) {
                netem = false;
                LOG.info("soak: no netem in this kernel ({}); nftables and tbf/htb stand in", e.getMessage());
            }
        }
        return netem;
    }

    /** Whether netem did the loss, duplication, reordering and delay (null: none was injected). */
    Boolean usedNetem() {
        return netem;
    }

    /**
     * Reordering without netem: an HTB qdisc with a fast and a slow class, and an nftables rule that
     * sends a random share of the packets to the slow one, so they arrive after packets sent later.
     */
    private void reorderWithoutNetem(int percent) throws IOException {
        String dev = options.device();
        run("tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "10", "r2q", "100000");
        try {
            run("tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit");
            run("tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate",
                    (2 + random.nextInt(8)) + "mbit");
            nft(List.of("oifname " + dev + " numgen random mod 100 < " + percent + " meta priority set 1:20"), false);
        } finally {
            run("tc", "qdisc", "del", "dev", dev, "root");
        }
    }

    /** Installs {@code rules} in an nftables table of its own for a while, then removes the table. */
    private void nft(List<String> rules, boolean input) throws IOException {
        String table = "soak" + ProcessHandle.current().pid();
        run("nft", "add", "table", "ip", table);
        try {
            run("nft", "add chain ip " + table + " out { type filter hook output priority 0 ; }");
            if (input) {
                run("nft", "add chain ip " + table + " in { type filter hook input priority 0 ; }");
            }
            for (String rule : rules) {
                run("nft", "add rule ip " + table + (rule.startsWith("iifname") ? " in " : " out ") + rule);
            }
            sleep(300 + random.nextInt(900));
        } finally {
            run("nft", "delete", "table", "ip", table);
        }
    }

    private interface Undo {
        void run() throws IOException;
    }

    private void hold(Undo undo) throws IOException {
        try {
            sleep(300 + random.nextInt(900));
        } finally {
            undo.run();
        }
    }

    private void netem(String... params) throws IOException {
        String[] cmd = new String[7 + params.length];
        System.arraycopy(new String[] {"tc", "qdisc", "replace", "dev", options.device(), "root", "netem"}, 0, cmd, 0, 7);
        System.arraycopy(params, 0, cmd, 7, params.length);
        run(cmd);
        try {
            sleep(300 + random.nextInt(900));
        } finally {
            run("tc", "qdisc", "del", "dev", options.device(), "root");
        }
    }

    /**
     * Runs a command, bounded to 10 s. A bare program name is looked up on the PATH and then in the
     * system administrator's directories, where Debian puts {@code tc} and {@code nft}: a root shell
     * started with a user's PATH ({@code /usr/bin:/bin}) still finds them.
     */
    static void run(String... cmd) throws IOException {
        String[] resolved = cmd.clone();
        resolved[0] = program(cmd[0]);
        Process p = new ProcessBuilder(resolved).redirectErrorStream(true).start();
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

    /** The path of program {@code name}: on the PATH, else in an sbin directory, else the name as given. */
    static String program(String name) {
        if (name.contains("/")) {
            return name;
        }
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(path == null ? List.of() : List.of(path.split(":")));
        dirs.addAll(SBIN);
        for (String dir : dirs) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                return candidate.toString();
            }
        }
        return name;
    }

    private static boolean sleep(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
