package org.jdapl.tools.dtest;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.tools.Progress;
import org.jdapl.tools.Table;
import org.jdapl.tools.Timings;
import org.jdapl.tools.ToolException;
import org.jdapl.tools.Units;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code dtest}: uDAPL's dtest on any IA. A server ({@code -s}) and a client ({@code -h}) in two
 * processes or hosts, or both in this process (the default). The client first connects to be
 * rejected, then connects with private data, learns the server's RDMA buffer by send/recv,
 * measures RDMA Write, RDMA Read and a send/recv ping-pong, and disconnects; each side measures
 * what its objects cost to create and free. The result is printed as tables.
 */
public final class Dtest {
    private static final Logger LOG = LoggerFactory.getLogger(Dtest.class);

    private final DatRegistry registry;
    private final PrintStream out;

    /** A dtest that opens IAs through {@code registry} and prints to {@code out}. */
    public Dtest(DatRegistry registry, PrintStream out) {
        this.registry = registry;
        this.out = out;
    }

    /**
     * Runs dtest with the given arguments.
     *
     * @throws ToolException USAGE for a bad command line, FAILURE for a failed run
     */
    public void run(List<String> args) {
        if (args.contains("--help") || args.contains("-?")) {
            out.println(DtestOptions.USAGE);
            return;
        }
        if (args.contains("-X")) { // OFED's dtestx on its wire (DtestX)
            new DtestX(registry, out).run(args);
            return;
        }
        DtestOptions options;
        try {
            options = DtestOptions.parse(args);
        } catch (ToolException e) {
            throw new ToolException(e.status(), e.getMessage() + "\n" + DtestOptions.USAGE);
        }
        if (options.ofed()) {
            new OfedDtest(registry, out).run(options);
            return;
        }
        switch (options.mode()) {
            case SELF -> runSelfContained(options);
            case SERVER -> runServer(options);
            case CLIENT -> runClient(options);
        }
    }

    private void runSelfContained(DtestOptions options) {
        CompletableFuture<SocketAddress> listening = new CompletableFuture<>();
        AtomicReference<Throwable> serverFailure = new AtomicReference<>();
        try (DtestServer server = new DtestServer(registry, options);
             DtestClient client = new DtestClient(registry, options)) {
            Thread serverThread = Thread.ofPlatform().name("dtest-server").start(() -> {
                try {
                    server.serve((address, connQual) -> listening.complete(address), options.timeoutMicros());
                } catch (Throwable t) {
                    serverFailure.set(t);
                    listening.completeExceptionally(t);
                    server.abort();
                }
            });
            try {
                SocketAddress address = awaitListening(listening, options);
                client.setUp();
                header(client, options, "self-contained, server and client in this process");
                try (Progress progress = Progress.start(out, "dtest", client.totalOperations(), client.progress::get)) {
                    client.run(address);
                }
            } catch (RuntimeException e) {
                client.abort();
                server.abort();
                joinServer(serverThread, options);
                Throwable s = serverFailure.get();
                if (s != null && s != e && s != e.getCause()) {
                    LOG.debug("dtest server failed too", s);
                    throw new ToolException(ToolException.FAILURE, describe(e) + "\n(server: " + describe(s) + ")", e);
                }
                throw e;
            }
            joinServer(serverThread, options);
            Throwable s = serverFailure.get();
            if (s != null) {
                throw new ToolException(ToolException.FAILURE, "server: " + describe(s), s);
            }
            report(client.timings, server.timings, options);
        }
    }

    private SocketAddress awaitListening(CompletableFuture<SocketAddress> listening, DtestOptions options) {
        try {
            return listening.get(options.timeoutMicros(), TimeUnit.MICROSECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof ToolException t ? t
                    : new ToolException(ToolException.FAILURE, "server: " + describe(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw ToolException.failure("the server did not listen within " + Units.duration(options.timeoutMicros() * 1e3));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ToolException.failure("interrupted");
        }
    }

    private void joinServer(Thread serverThread, DtestOptions options) {
        try {
            serverThread.join(TimeUnit.MICROSECONDS.toMillis(options.timeoutMicros()) * 2 + 1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (serverThread.isAlive()) {
            serverThread.interrupt();
            throw ToolException.failure("the server side did not finish");
        }
    }

    private void runServer(DtestOptions options) {
        try (DtestServer server = new DtestServer(registry, options)) {
            server.serve((address, connQual) -> {
                out.println("dtest server: IA " + options.iaName() + " listening at " + address
                        + ", conn_qual " + connQual);
                out.println("dtest server: run the client as: dtest -h " + clientHint(address) + " -P <IA>"
                        + (connQual == DtestOptions.DEFAULT_CONN_QUAL ? "" : " -q " + connQual));
                out.flush();
            }, options.serverWaitMicros());
            Wire.ConnectRequest client = server.client();
            out.println();
            out.printf("dtest server: served a client (buffer %s, burst %d, message %s%s%s)%n",
                    Units.size(client.bufLen()), client.burst(), Units.size(client.msgLen()),
                    client.connectOnly() ? ", connect only" : "", client.validate() ? ", validation on" : "");
            out.println();
            printCosts(null, server.timings);
            out.println();
            out.println("dtest: PASSED (server)");
        }
    }

    private static String clientHint(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            String host = inet.getAddress() == null || inet.getAddress().isAnyLocalAddress()
                    ? "<this host>" : inet.getAddress().getHostAddress();
            return inet.getPort() == 0 ? host : host + ":" + inet.getPort();
        }
        return "<host>";
    }

    private void runClient(DtestOptions options) {
        InetSocketAddress server = options.server();
        InetSocketAddress resolved = new InetSocketAddress(server.getHostString(), server.getPort());
        if (resolved.isUnresolved()) {
            throw ToolException.failure("dtest: cannot resolve host '" + server.getHostString() + "'");
        }
        try (DtestClient client = new DtestClient(registry, options)) {
            client.setUp();
            header(client, options, "client of " + resolved);
            try (Progress progress = Progress.start(out, "dtest", client.totalOperations(), client.progress::get)) {
                client.run(resolved);
            }
            report(client.timings, null, options);
        }
    }

    private void header(DtestSide side, DtestOptions options, String mode) {
        ProviderAttributes provider = side.ia.query().provider();
        out.printf("dtest: IA %s (provider %s %d.%d, address %s), %s%n", options.iaName(), provider.providerName(),
                provider.providerVersionMajor(), provider.providerVersionMinor(), side.iaAttributes.address(), mode);
        out.printf("dtest: buffer %s, burst %d, message %s%s, validation %s%n", Units.size(options.bufLen()),
                options.burst(), Units.size(options.msgLen()), options.connectOnly() ? ", connect only" : "",
                options.validate() ? "on" : "off");
        out.flush();
    }

    private void report(Timings client, Timings server, DtestOptions options) {
        out.println();
        printCosts(client, server);
        if (!options.connectOnly()) {
            out.println();
            Table data = new Table().column("data transfer").numeric("ops").numeric("total").numeric("per op")
                    .numeric("bandwidth");
            Timings.Entry rtt = client.get("message round trip");
            data.row("message round trip (" + Units.size(options.msgLen()) + ")", rtt.count(),
                    Units.duration(rtt.nanos()), Units.duration(rtt.mean()), null);
            for (String name : List.of("RDMA write", "RDMA read")) {
                Timings.Entry e = client.get(name);
                data.row(name + " (" + Units.size(options.bufLen()) + ")", e.count(), Units.duration(e.nanos()),
                        Units.duration(e.mean()), Units.bandwidth((double) e.count() * options.bufLen(), e.nanos()));
            }
            data.print(out, "");
            out.printf("dtest: timed after an untimed round of each (%d pings, %d RDMA writes and reads); every wait "
                    + "is a dat_evd_wait, so a round trip includes waking a blocked thread on each side%n",
                    Math.max(options.burst(), DtestClient.WARM_UP_PINGS), options.burst());
        }
        out.println();
        out.println("dtest: PASSED" + (options.validate() ? " (data validated)" : ""));
    }

    private static final Set<String> DATA = Set.of("message round trip", "RDMA write", "RDMA read");
    private static final List<String> COST_ORDER = List.of("IA open", "PZ create", "EVD create", "LMR create",
            "EP create", "PSP create", "reject probe", "connect", "disconnect", "free objects", "IA close");

    private void printCosts(Timings client, Timings server) {
        Set<String> names = new LinkedHashSet<>();
        for (Timings t : new Timings[] {client, server}) {
            if (t != null) {
                names.addAll(t.entries().keySet());
            }
        }
        names.removeAll(DATA);
        List<String> ordered = new ArrayList<>(COST_ORDER);
        ordered.retainAll(names);
        names.stream().filter(n -> !ordered.contains(n)).forEach(ordered::add);
        Table table = new Table().column("operation");
        if (client != null) {
            table.numeric("client").numeric("n");
        }
        if (server != null) {
            table.numeric("server").numeric("n");
        }
        for (String name : ordered) {
            List<Object> row = new ArrayList<>();
            row.add(name);
            for (Timings t : new Timings[] {client, server}) {
                if (t == null) {
                    continue;
                }
                Timings.Entry e = t.get(name);
                row.add(e == null ? null : Units.duration(e.mean()));
                row.add(e == null ? null : e.count());
            }
            table.row(row.toArray());
        }
        table.print(out, "");
    }

    private static String describe(Throwable t) {
        return t instanceof ToolException ? t.getMessage() : t.toString();
    }
}
