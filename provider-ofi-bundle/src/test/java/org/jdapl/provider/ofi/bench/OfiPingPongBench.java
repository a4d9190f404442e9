package org.jdapl.provider.ofi.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The benchmark rows of the ofi provider, each against libfabric's own tool with the same libfabric
 * provider in the same run, with the ratio: a 64-byte send/receive ping-pong through the DAT API on
 * two IAs of one libfabric provider and domain ({@link DatPair}: the ponger on a thread of its own,
 * both polling their EVDs with dat_evd_dequeue into a reusable event slot, after a warm-up for the
 * JIT) against {@code fi_pingpong -p <provider> -e msg -d <domain> -S 64} (server and client
 * processes, {@link FiPingPong}), half round trip; on a reliable-datagram provider ({@code shm},
 * {@code tcp;ofi_rxm}) the ponging IA is in a second JVM ({@link TwoJvmPair}, {@link BenchPeer}) and
 * the baseline is {@code fi_pingpong -p <provider> -e rdm}; and 1 MiB RDMA Writes (a window of
 * {@value DatPair#WINDOW} outstanding, each delivery complete) against {@code fi_pingpong ... -S 1048576},
 * MB/s (10^6 bytes per second, as fi_pingpong counts). Debian's libfabric-bin ships fi_pingpong
 * only, not fabtests' fi_rma_bw, so the 1 MiB baseline is fi_pingpong's send/receive throughput at
 * that size. With several rounds, fi_pingpong and the DAT measurement alternate (the DAT IAs stay
 * connected) and each figure is the median of its rounds.
 *
 * <p>A program, not a test: {@code scripts/ofi/bench.sh} (tcp on lo; {@code --provider shm}: shm between
 * two JVMs) and part {@code ofi} of the Soft-RoCE harness ({@code scripts/rxe/guest-tests.sh}: verbs on rxe0).
 *
 * <pre>
 * OfiPingPongBench [iterations [1 MiB iterations]] [--provider tcp|verbs|shm|tcp;ofi_rxm] [--domain lo|rxe0]
 *     [--peer jvm|thread] [--address ip] [--rounds n] [--big-rounds n] [--warmup n] [--warmup-seconds s] [--round-seconds s]
 *     [--cpus client,server] [--report file]
 * </pre>
 * The IAs are {@code "<provider> <domain>"} (tcp on lo by default; verbs on rxe0 as
 * {@code OfiVerbsFixture} opens them; {@code "shm"} without a domain); {@code --peer} puts the ponging
 * IA in this JVM ({@code thread}, the default on MSG providers) or in a second one ({@code jvm}, the
 * default on RDM providers); fi_pingpong's client reaches its server at {@code --address},
 * by default the DAT IA's own address (127.0.0.1 on lo, the rxe device's IPv4 address on rxe0). The
 * ping-pong warms up over {@code --warmup} round trips (20 000, or the iterations if fewer); with
 * {@code --warmup-seconds}, in chunks of {@value #WARM_CHUNK} for at least 10 s and then until the
 * JIT has compiled nothing for 5 s (an emulated CPU compiles slowly), as the OFA provider's
 * {@code DatBench} does, but no longer than that many seconds. With {@code --round-seconds}, a
 * round's iterations (of both tools) are at most what the warm-up's pace fits into that many seconds
 * (at least 100 round trips and 3 writes): on a loaded host an emulated guest's round trip takes
 * milliseconds, not tens of microseconds, and the rounds stay within their budget.
 * {@code --cpus} binds each end of both ping-pongs to a CPU: the pinging and writing side (and
 * fi_pingpong's client) to the first, the ponging side (and fi_pingpong's server) to the second.
 * Progress goes to the standard error, the table to the standard output and to {@code --report}. The
 * exit status is not 0 when a measurement failed.
 */
public final class OfiPingPongBench {
    private static final int SIZE = 64;
    private static final int BIG = 1 << 20;
    private static final int PORT = 47123;
    private static final int WARM_CHUNK = 200;

    private OfiPingPongBench() {
    }

    /** The command line. */
    record Options(String provider, String domain, boolean twoJvms, String address, int iterations, int bigIterations,
            int rounds, int bigRounds, int warmup, int warmupSeconds, int roundSeconds, int clientCpu, int serverCpu, Path report) {
        static Options parse(String... args) {
            String provider = "tcp";
            String domain = null;
            String peer = null;
            String address = null;
            int[] counts = {20000, 200};
            int positional = 0;
            int rounds = 1;
            int bigRounds = -1;
            int warmup = -1;
            int warmupSeconds = 0;
            int roundSeconds = 0;
            int clientCpu = -1;
            int serverCpu = -1;
            Path report = null;
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (!a.startsWith("--")) {
                    if (positional == counts.length) {
                        throw new IllegalArgumentException("unexpected argument " + a);
                    }
                    counts[positional++] = positive(a, a);
                    continue;
                }
                if (i + 1 == args.length) {
                    throw new IllegalArgumentException(a + " needs a value");
                }
                String v = args[++i];
                switch (a) {
                    case "--provider" -> provider = v;
                    case "--domain" -> domain = v;
                    case "--peer" -> peer = v;
                    case "--address" -> address = v;
                    case "--rounds" -> rounds = positive(a, v);
                    case "--big-rounds" -> bigRounds = positive(a, v);
                    case "--warmup" -> warmup = Integer.parseInt(v);
                    case "--warmup-seconds" -> warmupSeconds = positive(a, v);
                    case "--round-seconds" -> roundSeconds = positive(a, v);
                    case "--report" -> report = Path.of(v);
                    case "--cpus" -> {
                        String[] c = v.split(",");
                        if (c.length != 2) {
                            throw new IllegalArgumentException("--cpus client,server");
                        }
                        clientCpu = Integer.parseInt(c[0].trim());
                        serverCpu = Integer.parseInt(c[1].trim());
                    }
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (domain == null && !rdm(provider)) {
                if (!provider.equals("tcp")) {
                    throw new IllegalArgumentException("--domain is needed with --provider " + provider);
                }
                domain = "lo";
            }
            if (peer == null) {
                peer = rdm(provider) ? "jvm" : "thread";
            }
            if (!peer.equals("jvm") && !peer.equals("thread")) {
                throw new IllegalArgumentException("--peer jvm|thread: " + peer);
            }
            return new Options(provider, domain, peer.equals("jvm"), address, counts[0], counts[1], rounds,
                    bigRounds < 0 ? rounds : bigRounds, warmup < 0 ? Math.min(20_000, counts[0]) : warmup,
                    warmupSeconds, roundSeconds, clientCpu, serverCpu, report);
        }

        private static int positive(String what, String v) {
            int n = Integer.parseInt(v);
            if (n < 1) {
                throw new IllegalArgumentException(what + " must be at least 1: " + v);
            }
            return n;
        }

        /** Whether {@code provider} offers reliable-datagram endpoints only ({@code shm}, {@code ...;ofi_rxm}). */
        static boolean rdm(String provider) {
            return provider.equals("shm") || provider.endsWith(";ofi_rxm");
        }

        /** fi_pingpong's endpoint type. */
        String endpoint() {
            return rdm(provider) ? "rdm" : "msg";
        }

        /** The IA's {@code ia_params}, as dat.conf gives them. */
        String iaParams() {
            return domain == null ? provider : provider + " " + domain;
        }
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        ThreadAffinity.pin(o.clientCpu());
        double[] fiLat = new double[o.rounds()];
        double[] datLat = new double[o.rounds()];
        double[] fiBw = new double[o.bigRounds()];
        double[] datBw = new double[o.bigRounds()];
        FiPingPong fi;
        int port = PORT;
        int iterations;
        int bigIterations;
        progress("%s: DAT IAs \"%s\", %d B ping-pong, %d round(s) of %d round trips after %d%s to warm up",
                heading(o), o.iaParams(), SIZE, o.rounds(), o.iterations(), o.warmup(), o.warmupSeconds() == 0 ? ""
                        : " or more (until the JIT is quiet, at most " + o.warmupSeconds() + " s)");
        try (BenchPair pair = pair(o, "ofi-bench-lat", SIZE)) {
            fi = new FiPingPong(o.provider(), o.endpoint(), o.domain(), o.address() != null ? o.address()
                    : ((InetSocketAddress) pair.address()).getAddress().getHostAddress(), o.clientCpu(),
                    o.serverCpu());
            double pace = warmUp(pair, o);
            iterations = o.roundSeconds() == 0 ? o.iterations()
                    : fit(o.roundSeconds() * 1e6 / (2 * pace), 100, o.iterations());
            if (iterations != o.iterations()) {
                progress("rounds of %d round trips (%.2f us per half round trip fit %d s)", iterations, pace,
                        o.roundSeconds());
            }
            for (int r = 0; r < o.rounds(); r++) {
                fiLat[r] = fi.run(SIZE, iterations, port++)[1];
                datLat[r] = pair.pingPong(iterations);
                progress("round %d: 64 B half round trip fi_pingpong %.2f us, DAT %.2f us", r + 1, fiLat[r], datLat[r]);
            }
        }
        // The writes warm up over as many as a round has (the first round ran at about half speed
        // after 20: the JIT compiles the write path meanwhile).
        progress("%s: 1 MiB RDMA Writes, %d round(s) of %d after %d to warm up; fi_pingpong's client at %s",
                heading(o), o.bigRounds(), o.bigIterations(), o.bigIterations(), fi.address());
        try (BenchPair pair = pair(o, "ofi-bench-bw", BIG)) {
            double rate = pair.writeBandwidth(o.bigIterations());
            bigIterations = o.roundSeconds() == 0 ? o.bigIterations()
                    : fit(o.roundSeconds() * rate * 1e6 / BIG, 3, o.bigIterations());
            if (bigIterations != o.bigIterations()) {
                progress("rounds of %d writes (%.2f MB/s fit %d s)", bigIterations, rate, o.roundSeconds());
            }
            for (int r = 0; r < o.bigRounds(); r++) {
                fiBw[r] = fi.run(BIG, bigIterations, port++)[0];
                datBw[r] = pair.writeBandwidth(bigIterations);
                progress("round %d: 1 MiB fi_pingpong %.2f MB/s, DAT RDMA Write %.2f MB/s", r + 1, fiBw[r], datBw[r]);
            }
        }
        String table = table(o, fi, iterations, bigIterations, fiLat, datLat, fiBw, datBw);
        if (o.twoJvms()) {
            table += emuRows(o, iterations, bigIterations, median(datLat), median(datBw));
        }
        System.out.print(table);
        System.out.flush();
        if (o.report() != null) {
            Files.writeString(o.report(), table);
        }
    }

    /**
     * The same two measurements between two JVMs on the emulated provider's tcp fabric
     * ({@code tcp 127.0.0.1:0}, the kernel's loopback), what two JVMs on one host use without
     * libfabric, with the factor by which the libfabric IAs' figures ({@code lat}, {@code bw}) beat it.
     */
    private static String emuRows(Options o, int iterations, int bigIterations, double lat, double bw)
            throws InterruptedException {
        String ia = "tcp 127.0.0.1:0";
        progress("emulated tcp, two JVMs: the same ping-pong and RDMA Writes on IAs \"%s\"", ia);
        double[] emuLat = new double[o.rounds()];
        double[] emuBw = new double[o.bigRounds()];
        try (BenchPair pair = new TwoJvmPair("emu-bench-lat", ia, SIZE, o.serverCpu(), true)) {
            warmUp(pair, o);
            for (int r = 0; r < o.rounds(); r++) {
                emuLat[r] = pair.pingPong(iterations);
                progress("round %d: 64 B half round trip, emulated tcp %.2f us", r + 1, emuLat[r]);
            }
        }
        try (BenchPair pair = new TwoJvmPair("emu-bench-bw", ia, BIG, o.serverCpu(), true)) {
            pair.writeBandwidth(Math.min(20, bigIterations));
            for (int r = 0; r < o.bigRounds(); r++) {
                emuBw[r] = pair.writeBandwidth(bigIterations);
                progress("round %d: 1 MiB RDMA Write, emulated tcp %.2f MB/s", r + 1, emuBw[r]);
            }
        }
        double el = median(emuLat);
        double eb = median(emuBw);
        String row = "%-40s %12s %12s %8s%n";
        String values = "%-40s %12.2f %12s %8.2f%n";
        return String.format(Locale.ROOT, row, "emulated tcp, two JVMs", "DAT", "", "gain")
                + String.format(Locale.ROOT, values, "64 B send/recv half round trip (us)", el, "", el / lat)
                + String.format(Locale.ROOT, values, "1 MiB RDMA Write bandwidth (MB/s)", eb, "", bw / eb)
                + String.format(Locale.ROOT, "the emulated provider's IAs \"%s\", the ponging one in a second JVM;"
                        + " gain = how many times the %s IAs' figure above beats it%n", ia, o.provider());
    }

    /** The two EPs, the ponging side in this JVM or in a peer JVM. */
    private static BenchPair pair(Options o, String name, int size) {
        return o.twoJvms() ? new TwoJvmPair(name, o.iaParams(), size, o.serverCpu())
                : new DatPair(name, o.iaParams(), size, o.serverCpu());
    }

    /** {@code n} between {@code min} and {@code max}. */
    private static int fit(double n, int min, int max) {
        return (int) Math.max(Math.min(n, max), Math.min(min, max));
    }

    /**
     * The ping-pong's warm-up: {@code --warmup} round trips, JIT-quiet and bounded with
     * {@code --warmup-seconds}. Returns the half round trip of its last chunk, in microseconds.
     */
    private static double warmUp(BenchPair pair, Options o) throws InterruptedException {
        if (o.warmupSeconds() == 0) {
            return pair.pingPong(o.warmup());
        }
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
        long start = System.nanoTime();
        long lastJit = timed ? jit.getTotalCompilationTime() : 0;
        long lastChange = start;
        long lastReport = start;
        long max = TimeUnit.SECONDS.toNanos(o.warmupSeconds());
        int done = 0;
        while (true) {
            double pace = pair.pingPong(WARM_CHUNK);
            done += WARM_CHUNK;
            long now = System.nanoTime();
            long total = timed ? jit.getTotalCompilationTime() : 0;
            if (total != lastJit) {
                lastJit = total;
                lastChange = now;
            }
            boolean quiet = !timed || now - lastChange >= TimeUnit.SECONDS.toNanos(5);
            if (now - start >= max || (done >= o.warmup() && now - start >= TimeUnit.SECONDS.toNanos(10) && quiet)) {
                progress("warm-up: %d round trips in %.1f s, JIT %d ms, the last %d at %.2f us per half round trip",
                        done, (now - start) / 1e9, lastJit, WARM_CHUNK, pace);
                return pace;
            }
            if (now - lastReport >= TimeUnit.SECONDS.toNanos(30)) {
                progress("warming up: %d round trips in %.1f s, JIT %d ms", done, (now - start) / 1e9, lastJit);
                lastReport = now;
            }
        }
    }

    private static String heading(Options o) {
        return o.provider() + (o.domain() == null ? "" : " on " + o.domain()) + (o.twoJvms() ? ", two JVMs" : "");
    }

    private static void progress(String format, Object... args) {
        System.err.printf(Locale.ROOT, "ofi-bench: " + format + "%n", args);
        System.err.flush();
    }

    private static String table(Options o, FiPingPong fi, int iterations, int bigIterations, double[] fiLat, double[] datLat, double[] fiBw,
            double[] datBw) {
        StringBuilder t = new StringBuilder();
        String row = "%-40s %12s %12s %8s%n";
        String values = "%-40s %12.2f %12.2f %8.2f%n";
        double dl = median(datLat);
        double fl = median(fiLat);
        double db = median(datBw);
        double fb = median(fiBw);
        t.append(String.format(Locale.ROOT, row, heading(o), "DAT", "fi_pingpong", "ratio"));
        t.append(String.format(Locale.ROOT, values, "64 B send/recv half round trip (us)", dl, fl, dl / fl));
        t.append(String.format(Locale.ROOT, values, "1 MiB RDMA Write bandwidth (MB/s)", db, fb, db / fb));
        if (o.rounds() > 1 || o.bigRounds() > 1) {
            t.append(String.format(Locale.ROOT, "medians of rounds (DAT and fi_pingpong alternating):%n"));
            t.append(String.format(Locale.ROOT, "  64 B   DAT: %s | fi_pingpong: %s%n", list(datLat), list(fiLat)));
            t.append(String.format(Locale.ROOT, "  1 MiB  DAT: %s | fi_pingpong: %s%n", list(datBw), list(fiBw)));
        }
        t.append(String.format(Locale.ROOT, "fi_pingpong -p %s -e %s%s, client to %s, %d and %d iterations%s;"
                + " DAT IAs \"%s\"%s%n", o.provider(), o.endpoint(), o.domain() == null ? "" : " -d " + o.domain(),
                fi.address(), iterations, bigIterations,
                o.clientCpu() < 0 ? "" : ", client on CPU " + o.clientCpu() + " and server on CPU " + o.serverCpu()
                        + " (both ping-pongs)", o.iaParams(), o.twoJvms() ? ", the ponging one in a second JVM" : ""));
        return t.toString();
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String list(double[] v) {
        return Arrays.stream(v).mapToObj(x -> String.format(Locale.ROOT, "%.2f", x)).collect(Collectors.joining(" "));
    }
}
