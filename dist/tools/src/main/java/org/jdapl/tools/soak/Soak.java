package org.jdapl.tools.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.tools.Table;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;

/**
 * {@code soak}: many connections kept busy with echoed sends and RDMA Write/Read pairs of random
 * sizes, every byte checked on its way back, every posted cookie accounted for, while faults are
 * injected from outside the provider ({@link FaultKind}). The final table says what was posted and
 * how it completed; completed twice, never completed, corrupt, damaged canaries and stalls must be
 * 0, or the run fails.
 */
public final class Soak {
    /** How often a run prints its progress line. */
    static final long PROGRESS_MILLIS = 5_000;

    private final DatRegistry registry;
    private final PrintStream out;
    private final InputStream in;
    private final PrintStream progress;
    private final long progressMillis;

    /**
     * A soak command printing its results to {@code out} and, every 5 s while it runs, a progress
     * line to standard error; {@code --serve} reads its commands from {@code in}.
     */
    public Soak(DatRegistry registry, PrintStream out, InputStream in) {
        this(registry, out, in, System.err, PROGRESS_MILLIS);
    }

    /** A soak command printing a progress line to {@code progress} every {@code progressMillis}. */
    Soak(DatRegistry registry, PrintStream out, InputStream in, PrintStream progress, long progressMillis) {
        this.registry = registry;
        this.out = out;
        this.in = in;
        this.progress = progress;
        this.progressMillis = progressMillis;
    }

    /**
     * Runs soak with {@code args}.
     *
     * @throws ToolException USAGE for a bad command line, FAILURE if a must-be-0 count is not 0
     */
    public void run(List<String> args) {
        if (args.contains("--help") || args.contains("-h")) {
            out.println(SoakOptions.USAGE);
            return;
        }
        SoakOptions options = SoakOptions.parse(args);
        if (options.serve()) {
            serve(options);
        } else {
            drive(options);
        }
    }

    private void serve(SoakOptions options) {
        Responder responder = new Responder(registry, options.iaName(), options.connQual(), options.window(),
                options.maxSize());
        try (BufferedReader commands = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            announce(responder);
            String line;
            while ((line = commands.readLine()) != null) {
                if (line.strip().equals("reopen")) {
                    responder.reopen();
                    announce(responder);
                }
            }
        } catch (IOException e) {
            // standard input ended
        } finally {
            responder.close();
        }
        out.println(Peer.SERVED + responder.connections.sum() + " connections, " + responder.canaryDamaged.sum()
                + " canaries damaged");
        out.flush();
    }

    private void announce(Responder responder) {
        out.println(Peer.SERVING + responder.address() + " " + responder.connQual());
        out.flush();
    }

    private void drive(SoakOptions options) {
        Resources start = Resources.now();
        Ledger ledger = new Ledger();
        Responder responder = null;
        Peer peer = null;
        InterfaceAdapter ia = null;
        List<Stream> streams = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        Injector injector = null;
        long began = System.nanoTime();
        long elapsed;
        try {
            Stream.Target target;
            if (options.peerCommand().isEmpty()) {
                responder = new Responder(registry, options.iaName(), options.connQual(), options.window(),
                        options.maxSize());
                target = responder;
            } else {
                peer = new Peer(options.peerCommand());
                target = peer;
            }
            try {
                ia = registry.open(options.iaName(), 64);
            } catch (DatException e) {
                throw new ToolException(ToolException.FAILURE, "soak: cannot open IA '" + options.iaName() + "': "
                        + e.getMessage(), e);
            }
            ProtectionZone pz = ia.createPz();
            long deadline = began + TimeUnit.SECONDS.toNanos(options.durationSeconds());
            Responder r = responder;
            Peer p = peer;
            Injector inj = new Injector(options, streams, r != null ? r::reopen : p::reopen,
                    p != null ? p::killAndRestart : () -> { });
            injector = inj;
            BooleanSupplier more = () -> (options.operations() > 0 ? ledger.posted.sum() < options.operations()
                    : System.nanoTime() < deadline) || inj.failure() == null && !inj.reached(options.minFaults());
            for (int i = 0; i < options.connections(); i++) {
                streams.add(new Stream(i, ia, pz, ledger, options, target, more));
            }
            out.println(String.format(Locale.ROOT, "soak: IA %s, %d connections, window %d, sizes 1..%s, seed %d, %s, "
                            + "faults %s every %d ms on average%s", options.iaName(), options.connections(),
                    options.window(), Units.size(options.maxSize()), options.seed(),
                    options.operations() > 0 ? options.operations() + " DTOs" : options.durationSeconds() + " s",
                    options.faults().isEmpty() ? "none" : String.join(",", options.faults().stream()
                            .map(FaultKind::option).toList()), options.intervalMillis(),
                    peer != null ? ", served by another process (" + options.peerCommand().getFirst() + " ...)" : ""));
            out.flush();
            for (Stream s : streams) {
                threads.add(Thread.ofPlatform().name("soak-stream").start(s));
            }
            Thread faults = Thread.ofPlatform().daemon().name("soak-faults").start(injector);
            long nextLine = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(progressMillis);
            for (Thread t : threads) {
                while (t.isAlive()) {
                    t.join(Math.min(progressMillis, 1_000));
                    if (System.nanoTime() - nextLine >= 0) {
                        nextLine = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(progressMillis);
                        progressLine(began, ledger, inj);
                    }
                }
            }
            injector.stop();
            faults.join(TimeUnit.MILLISECONDS.toMillis(options.cutMillis()) + 60_000);
            elapsed = System.nanoTime() - began;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ToolException.failure("soak: interrupted");
        } finally {
            if (injector != null) {
                injector.stop();
            }
            if (ia != null) {
                try {
                    ia.close(CloseFlag.ABRUPT);
                } catch (DatException e) {
                    // closed
                }
            }
            if (responder != null) {
                responder.close();
            }
            if (peer != null) {
                peer.close();
            }
        }
        Resources end = Resources.now();
        long canaries = ledger.canaryDamaged.sum() + (responder != null ? responder.canaryDamaged.sum() : 0)
                + (peer != null ? peer.canaryDamaged : 0);
        report(options, ledger, injector, canaries, start, end, elapsed);
    }

    /** {@code soak: 25 s, 1234567 DTOs posted (49383/s), 1234000 completed, 57 faults, 40 reconnections}. */
    private void progressLine(long began, Ledger ledger, Injector injector) {
        double seconds = (System.nanoTime() - began) / 1e9;
        progress.println(String.format(Locale.ROOT, "soak: %.0f s, %d DTOs posted (%.0f/s), %d completed, %d faults, "
                        + "%d reconnections", seconds, ledger.posted.sum(), ledger.posted.sum() / seconds,
                ledger.completedOk.sum() + ledger.flushed.sum() + ledger.errors().values().stream()
                        .mapToLong(Long::longValue).sum(), injector.total(), ledger.reconnections.sum()));
        progress.flush();
    }

    private void report(SoakOptions options, Ledger ledger, Injector injector, long canaries, Resources start,
                        Resources end, long elapsed) {
        Table t = new Table().column("measure").numeric("value").column("");
        t.row("DTOs posted", ledger.posted.sum(), "");
        t.row("completed OK", ledger.completedOk.sum(), "");
        t.row("flushed", ledger.flushed.sum(), "");
        ledger.errors().forEach((status, n) -> t.row("completed " + status, n, ""));
        t.row("completed twice", ledger.completedTwice.sum(), "must be 0");
        t.row("never completed", ledger.neverCompleted.sum() + ledger.outstanding(), "must be 0");
        t.row("bytes verified", ledger.bytesVerified.sum(), Units.size(ledger.bytesVerified.sum()));
        t.row("corrupt", ledger.corrupt.sum(), "must be 0" + (ledger.corrupt.sum() == 0 ? ""
                : " (" + ledger.corruptReads.sum() + " RDMA Reads, " + ledger.corruptEchoes.sum() + " echoes)"));
        t.row("canaries damaged", canaries, "must be 0");
        t.row("stalled connections", ledger.stalls.sum(), "must be 0");
        t.row("reconnections", ledger.reconnections.sum(), "");
        for (FaultKind kind : options.faults()) {
            long missed = injector.missed(kind);
            boolean standIn = Boolean.FALSE.equals(injector.usedNetem()) && kind.compareTo(FaultKind.LOSS) >= 0;
            t.row("fault " + kind.option(), injector.injected(kind), kind.description
                    + (standIn ? (kind == FaultKind.DELAY ? " (tbf rate limit: no netem in this kernel)"
                    : kind == FaultKind.REORDER ? " (htb slow class + nftables: no netem in this kernel)"
                    : " (nftables: no netem in this kernel)") : "")
                    + (missed > 0 ? " (" + missed + " found no connection)" : ""));
        }
        out.println();
        t.print(out, "");
        out.println();
        Table r = new Table().column("resource").numeric("start").numeric("end").column("");
        r.row("heap in use", Units.size(start.heapBytes()), Units.size(end.heapBytes()), "after a GC");
        boolean nmt = start.nativeCommittedBytes() >= 0 && end.nativeCommittedBytes() >= 0;
        r.row("native memory (NMT committed)", nmt ? Units.size(start.nativeCommittedBytes()) : "off",
                nmt ? Units.size(end.nativeCommittedBytes()) : "off", nmt ? "grows mostly with the JIT's code cache"
                        : "on with the JVM option -XX:NativeMemoryTracking=summary (./jdapl: JDAPL_JAVA_OPTS)");
        r.row("direct buffers", Units.size(start.directBytes()), Units.size(end.directBytes()),
                "NIO direct buffers: 128 KiB per open tcp-fabric connection; "
                        + "a few bytes under ./jdapl are the OSGi application's, not the provider's");
        r.row("threads", start.threads(), end.threads(), "");
        r.row("file descriptors", start.fds(), end.fds(), "/proc/self/fd");
        r.print(out, "");
        out.println();
        double seconds = elapsed / 1e9;
        out.println(String.format(Locale.ROOT, "soak: %.1f s, %.0f DTOs/s, %d faults", seconds,
                ledger.posted.sum() / seconds, injector.total()));
        List<String> bad = new ArrayList<>();
        if (ledger.completedTwice.sum() != 0) {
            bad.add("completed twice");
        }
        if (ledger.neverCompleted.sum() + ledger.outstanding() != 0) {
            bad.add("never completed");
        }
        if (ledger.corrupt.sum() != 0) {
            bad.add("corrupt");
        }
        if (canaries != 0) {
            bad.add("canaries damaged");
        }
        if (ledger.stalls.sum() != 0) {
            bad.add("stalled connections");
        }
        if (injector.failure() != null) {
            bad.add("fault injection failed: " + injector.failure());
        }
        out.flush();
        if (!bad.isEmpty()) {
            throw ToolException.failure("soak: FAILED: " + String.join(", ", bad));
        }
        out.println("soak: PASSED");
    }
}
