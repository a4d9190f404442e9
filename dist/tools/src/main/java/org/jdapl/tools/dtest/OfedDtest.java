package org.jdapl.tools.dtest;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.Table;
import org.jdapl.tools.Timings;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;

/**
 * {@code dtest -O}: dtest speaking OFED dtest's wire ({@link OfedWire}), as server, client, or
 * both in this process. A jdapl server serves OFED's {@code dtest -h}; a jdapl client runs against
 * OFED's {@code dtest -s} (give both the same {@code -b} and {@code -B}).
 */
final class OfedDtest {
    private final DatRegistry registry;
    private final PrintStream out;

    OfedDtest(DatRegistry registry, PrintStream out) {
        this.registry = registry;
        this.out = out;
    }

    void run(DtestOptions options) {
        out.printf("dtest: OFED dtest's wire, IA %s, buffer %s, burst %d, signal rate %d, conn_qual %d%n",
                options.iaName(), Units.size(options.bufLen()), options.burst(), options.signalRate(),
                options.connQual());
        out.flush();
        switch (options.mode()) {
            case SERVER -> {
                try (OfedSide side = new OfedSide(registry, options, true, out)) {
                    side.setUp();
                    SocketAddress address = side.address();
                    out.printf("dtest server: listening at %s conn_qual %d; parameters on TCP port %d%n", address,
                            options.connQual(), OfedWire.CONN_PORT);
                    out.flush();
                    OfedWire.offerParams(OfedWire.paramsMessage(((InetSocketAddress) address).getAddress(),
                            options.iaName()), OfedWire.CONN_PORT, options.serverWaitMicros() / 1000);
                    side.accept(options.serverWaitMicros());
                    exchange(side);
                    report(side.timings, options);
                }
            }
            case CLIENT -> {
                OfedWire.ServerParams params = OfedWire.fetchParams(options.server().getHostString(),
                        options.server().getPort() == 0 ? OfedWire.CONN_PORT : options.server().getPort(),
                        options.serverWaitMicros() / 1000);
                out.printf("dtest client: the server is %s (provider %s)%n", params.address().getHostAddress(),
                        params.provider());
                try (OfedSide side = new OfedSide(registry, options, false, out)) {
                    side.setUp();
                    side.connect(new InetSocketAddress(params.address(), 0));
                    exchange(side);
                    report(side.timings, options);
                }
            }
            case SELF -> selfContained(options);
        }
        out.println();
        out.println("dtest: PASSED (OFED dtest's wire)");
    }

    private static void exchange(OfedSide side) {
        side.rdmaWrite();
        side.rdmaRead();
        side.pingPong();
        side.disconnect();
        side.teardown();
    }

    private void selfContained(DtestOptions options) {
        CompletableFuture<SocketAddress> listening = new CompletableFuture<>();
        CompletableFuture<Void> served = new CompletableFuture<>();
        try (OfedSide server = new OfedSide(registry, options, true, out);
             OfedSide client = new OfedSide(registry, options, false, out)) {
            Thread t = Thread.ofPlatform().name("dtest-server").start(() -> {
                try {
                    server.setUp();
                    listening.complete(server.address());
                    server.accept(options.timeoutMicros());
                    exchange(server);
                    served.complete(null);
                } catch (Throwable e) {
                    listening.completeExceptionally(e);
                    served.completeExceptionally(e);
                    server.close();
                }
            });
            try {
                SocketAddress address = get(listening, options);
                client.setUp();
                client.connect(address);
                exchange(client);
                get(served, options);
            } catch (RuntimeException e) {
                client.close();
                server.close();
                throw e;
            } finally {
                try {
                    t.join(TimeUnit.MICROSECONDS.toMillis(options.timeoutMicros()) * 2 + 1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            report(client.timings, options);
        }
    }

    private static <T> T get(CompletableFuture<T> f, DtestOptions options) {
        try {
            return f.get(options.timeoutMicros() * 4 + 10_000_000, TimeUnit.MICROSECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof ToolException t ? t
                    : new ToolException(ToolException.FAILURE, "server: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw ToolException.failure("the server side did not finish");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ToolException.failure("interrupted");
        }
    }

    private void report(Timings t, DtestOptions options) {
        out.println();
        Table table = new Table().column("measurement").numeric("ops").numeric("total").numeric("per op")
                .numeric("bandwidth");
        Timings.Entry w = t.get("RDMA write");
        table.row("RDMA write (" + Units.size(options.bufLen()) + ")", w.count(), Units.duration(w.nanos()),
                Units.duration(w.mean()), Units.bandwidth((double) w.count() * options.bufLen(), w.nanos()));
        Timings.Entry r = t.get("RDMA read");
        table.row("RDMA read (" + Units.size(options.bufLen()) + ")", r.count(), Units.duration(r.nanos()),
                Units.duration(r.mean()), Units.bandwidth((double) r.count() * options.bufLen(), r.nanos()));
        Timings.Entry p = t.get("message round trip");
        table.row("ping-pong latency (half round trip)", p.count(), Units.duration(p.nanos()),
                Units.duration(p.mean() / 2), null);
        for (String name : new String[] {"connect", "disconnect"}) {
            Timings.Entry e = t.get(name);
            table.row(name, e.count(), Units.duration(e.nanos()), Units.duration(e.mean()), null);
        }
        table.print(out, "");
    }
}
