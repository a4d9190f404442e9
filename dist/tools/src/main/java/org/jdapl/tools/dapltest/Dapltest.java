package org.jdapl.tools.dapltest;

import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.tools.Progress;
import org.jdapl.tools.Table;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;

/**
 * {@code dapltest}: OFED's dapltest on any IA. {@code -T S} is the server; {@code -T T} (transaction),
 * {@code -T P} (performance), {@code -T F} (functional features) and {@code -T Q} (quit) are its
 * clients ({@code -s HOST[:PORT]}); without {@code -s}, {@code -T T}, {@code -T P} and
 * {@code -T F dataxfer_client} run a server in this process on a second opening of the IA.
 * {@code -T L} (limits) runs alone.
 */
public final class Dapltest {
    private final DatRegistry registry;
    private final PrintStream out;

    /** A dapltest that opens IAs through {@code registry} and prints to {@code out}. */
    public Dapltest(DatRegistry registry, PrintStream out) {
        this.registry = registry;
        this.out = out;
    }

    /**
     * Runs dapltest with the given arguments.
     *
     * @throws ToolException USAGE for a bad command line, FAILURE for a failed run
     */
    public void run(List<String> args) {
        if (args.contains("--help") || args.contains("-?")) {
            out.println(DapltestOptions.USAGE);
            return;
        }
        DapltestOptions options;
        try {
            options = DapltestOptions.parse(args);
        } catch (ToolException e) {
            throw new ToolException(e.status(), e.getMessage() + "\n" + DapltestOptions.USAGE);
        }
        if (options.debug()) {
            out.println(options.describe());
        }
        switch (options.test()) {
            case 'S' -> server(options);
            case 'L' -> new LimitTest(registry, options, out).run();
            case 'F' -> new FunctionalTests(registry, options, out, this::withServer).run();
            default -> withServer(options, target -> client(options, target));
        }
    }

    /** Opens an IA by name. */
    static InterfaceAdapter open(DatRegistry registry, String name) {
        try {
            return registry.open(name, 16);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "dapltest: cannot open IA '" + name + "': " + e.getMessage(), e);
        }
    }

    private void server(DapltestOptions options) {
        try (DapltestServer server = new DapltestServer(registry, options.iaName(), options.connQual(),
                options.timeoutMicros(), out)) {
            ProviderAttributes p = server.ia.query().provider();
            out.printf("dapltest server: IA %s (provider %s %d.%d) listening at %s, conn_qual 0x%x%n", options.iaName(),
                    p.providerName(), p.providerVersionMajor(), p.providerVersionMinor(), server.address(),
                    server.connQual());
            out.println("dapltest server: run clients as: dapltest -T T|P|F|Q -s " + hint(server.address()) + " -D <IA>"
                    + (server.connQual() == DapltestOptions.DEFAULT_CONN_QUAL ? "" : " -q " + server.connQual()));
            out.flush();
            int failed = server.serve(0);
            server.closeGracefully();
            out.printf("dapltest server: stopped by -T Q after %d session(s), %d passed, %d failed; every object freed%n",
                    server.passed() + failed, server.passed(), failed);
            if (failed > 0) {
                throw ToolException.failure("dapltest server: " + failed + " session(s) failed");
            }
        }
    }

    private static String hint(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            String host = inet.getAddress() == null || inet.getAddress().isAnyLocalAddress()
                    ? "<this host>" : inet.getAddress().getHostAddress();
            return inet.getPort() == 0 ? host : host + ":" + inet.getPort();
        }
        return "<host>";
    }

    /** The server a client talks to: its address, conn_qual and how it is described. */
    record Target(SocketAddress address, long connQual, String description) {
    }

    /**
     * Runs {@code client} against the server of {@code -s}, or against a server in this process
     * (a second opening of the IA, any free conn_qual) that serves that one session.
     */
    void withServer(DapltestOptions options, Consumer<Target> client) {
        if (options.server() != null) {
            InetSocketAddress server = Client.resolve(options.server());
            client.accept(new Target(server, options.connQual(), "client of the server at " + options.server().getHostString()
                    + (server.getPort() == 0 ? "" : ":" + server.getPort())));
            return;
        }
        PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
        CompletableFuture<Integer> served = new CompletableFuture<>();
        try (DapltestServer server = new DapltestServer(registry, options.iaName(), -1, options.timeoutMicros(), quiet)) {
            Thread thread = Thread.ofPlatform().name("dapltest-server").start(() -> {
                try {
                    served.complete(server.serve(1));
                } catch (Throwable t) {
                    served.completeExceptionally(t);
                }
            });
            try {
                client.accept(new Target(server.address(), server.connQual(), "server and client in this process"));
            } catch (RuntimeException e) {
                server.close();
                throw e;
            } finally {
                try {
                    thread.join(TimeUnit.MICROSECONDS.toMillis(options.timeoutMicros()) * 2 + 5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (!served.isDone()) {
                throw ToolException.failure("dapltest: the server side did not finish");
            }
            server.closeGracefully();
        }
    }

    /** {@code -T T}, {@code -T P}, {@code -T Q} as a client of {@code target}. */
    private void client(DapltestOptions options, Target target) {
        InterfaceAdapter ia = open(registry, options.iaName());
        try {
            ProtectionZone pz = ia.createPz();
            Side side = new Side(ia, pz, ia.query().attributes(), options.timeoutMicros(), options.poll(),
                    options.qos());
            check(side, options);
            ProviderAttributes p = ia.query().provider();
            try (Client client = new Client(side, target.address(), target.connQual())) {
                int session = client.request(options.args());
                out.printf("dapltest: IA %s (provider %s %d.%d), %s, session %d%n", options.iaName(), p.providerName(),
                        p.providerVersionMajor(), p.providerVersionMinor(), target.description(), session);
                switch (options.test()) {
                    case 'T' -> transaction(side, options, client);
                    case 'P' -> performance(side, options, client);
                    default -> out.println("dapltest -T Q: the server stops once its other sessions end");
                }
                client.awaitResult();
            }
            pz.free();
            ia.close(CloseFlag.GRACEFUL);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "dapltest: " + e.getMessage(), e);
        } finally {
            if (!ia.isFreed()) {
                ia.close();
            }
        }
        out.println("dapltest: PASSED" + (options.validate() ? " (data validated)" : "")
                + (options.test() == 'Q' ? "" : ", the server's side too"));
    }

    private static void check(Side side, DapltestOptions options) {
        for (Op op : options.ops()) {
            long max = op.kind() == Op.Kind.SR ? side.attributes().maxMessageSize() : side.attributes().maxRdmaSize();
            if (op.size() > max) {
                throw ToolException.usage("dapltest: " + op + ": the IA moves at most " + max + " bytes per "
                        + (op.kind() == Op.Kind.SR ? "message" : "RDMA operation"));
            }
            if (op.segments() > side.attributes().maxIovSegmentsPerDto()) {
                throw ToolException.usage("dapltest: " + op + ": the IA takes at most "
                        + side.attributes().maxIovSegmentsPerDto() + " segments per DTO");
            }
        }
    }

    private void transaction(Side side, DapltestOptions options, Client client) {
        out.printf("dapltest -T T: %d thread%s x %d endpoint pair%s x %d iterations, validation %s%n",
                options.threads(), options.threads() == 1 ? "" : "s", options.endpoints(),
                options.endpoints() == 1 ? "" : "s", options.iterations(), options.validate() ? "on" : "off");
        out.flush();
        AtomicLong[] counts = new AtomicLong[options.ops().size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new AtomicLong();
        }
        AtomicLong done = new AtomicLong();
        long total = (long) options.threads() * options.endpoints() * options.iterations() * options.ops().size();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        try (Progress progress = Progress.start(out, "dapltest", total, done::get)) {
            for (int t = 0; t < options.threads(); t++) {
                TransactionSide s = new TransactionSide(side, options, true, t, counts, done);
                threads.add(Thread.ofPlatform().name("dapltest-" + t).start(() -> {
                    try {
                        s.run(client::connect, null);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            Session.joinAll(threads, options.timeoutMicros(), failure);
        }
        long nanos = System.nanoTime() - start;
        Table table = new Table().column("operation").numeric("ops").numeric("bytes");
        long ops = 0;
        long bytes = 0;
        for (int i = 0; i < options.ops().size(); i++) {
            Op op = options.ops().get(i);
            long count = counts[i].get();
            table.row(op, count, Units.size(count * op.size()));
            ops += count;
            bytes += count * op.size();
        }
        table.row("total", ops, Units.size(bytes));
        out.println();
        table.print(out, "");
        out.println();
        out.printf("dapltest -T T: %d operations in %s (%s, %s)%n", ops, Units.duration(nanos),
                Units.rate(ops, nanos), Units.bandwidth(bytes, nanos));
    }

    private void performance(Side side, DapltestOptions options, Client client) {
        Op op = options.ops().getFirst();
        out.printf("dapltest -T P: %s, %d operations after %d untimed, pipeline %d, %s%n", op, options.iterations(),
                options.warmup(), options.pipeline(), options.poll() ? "polling (-m p)" : "blocking (-m b)");
        out.flush();
        PerformanceSide test = new PerformanceSide(side, options);
        long nanos;
        try (Progress progress = Progress.start(out, "dapltest", (long) options.warmup() + options.iterations(),
                test.done::get)) {
            nanos = test.runClient(client::connect);
        }
        long n = options.iterations();
        long bytes = n * op.size();
        Table table = new Table().column("operation").numeric("ops").numeric("time").numeric("per op")
                .numeric("ops/s").numeric("bandwidth");
        table.row(op, n, Units.duration(nanos), Units.duration((double) nanos / n), Units.rate(n, nanos),
                Units.bandwidth(bytes, nanos));
        out.println();
        table.print(out, "");
        out.println();
    }
}
