package org.jdapl.tools.dapltest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.tools.ToolException;

/**
 * One client's session on the dapltest server, on a thread of its own: accepts the client's control
 * connection, reads its request (the client's command line), runs the server's side of the test
 * with a PZ of its own, sends the result and frees everything once the client disconnects. The
 * test's endpoints arrive as connection requests that the server hands to the session by index.
 */
final class Session {
    /** What a session reports to the server when it ends. */
    record Outcome(int id, String request, boolean quit, Throwable failure) {
    }

    private final DapltestServer server;
    final int id;
    private final ConnectionRequest control;
    private final Map<Integer, CompletableFuture<ConnectionRequest>> requests = new ConcurrentHashMap<>();
    private String description = "(no request)";
    private boolean quit;
    private volatile boolean over;

    Session(DapltestServer server, int id, ConnectionRequest control) {
        this.server = server;
        this.id = id;
        this.control = control;
    }

    /** Hands the connection request of test endpoint {@code index} to the session. */
    void offer(int index, ConnectionRequest request) {
        if (over || !requests.computeIfAbsent(index, i -> new CompletableFuture<>()).complete(request)) {
            request.reject(new byte[0]);
        }
    }

    private ConnectionRequest request(int index, long timeoutMicros) {
        try {
            return requests.computeIfAbsent(index, i -> new CompletableFuture<>()).get(timeoutMicros, TimeUnit.MICROSECONDS);
        } catch (TimeoutException e) {
            throw ToolException.failure("session " + id + ": endpoint " + index + " did not connect");
        } catch (ExecutionException | InterruptedException e) {
            throw new ToolException(ToolException.FAILURE, "session " + id + ": " + e, e);
        }
    }

    /** Runs the session to its end; never throws. */
    Outcome run() {
        ProtectionZone pz = null;
        Conn.Group group = null;
        Conn conn = null;
        Throwable failure = null;
        try {
            pz = server.ia.createPz();
            Side side = new Side(server.ia, pz, server.attributes, server.timeoutMicros, false, Qos.BEST_EFFORT);
            group = new Conn.Group(side, 1, 4);
            conn = new Conn(group, 0, Wire.MAX_MESSAGE, 1, 1, 4, 1, 1);
            conn.postRecv(0, 1);
            conn.accept(control, "session " + id + ": the control connection");
            Wire.Message m = conn.message(0, group.receives.take(1, DtoOperation.RECEIVE, "the client's request"));
            if (m.type() != Wire.MSG_REQUEST) {
                throw ToolException.failure("the client sent message type " + m.type() + " instead of a request");
            }
            List<String> args = m.text().isEmpty() ? List.of() : List.of(m.text().split("\0", -1));
            description = String.join(" ", args);
            DapltestOptions options;
            try {
                options = DapltestOptions.parse(args);
            } catch (ToolException e) {
                reply(conn, group, new Wire.Message(Wire.MSG_REFUSED, 0, 0, 0, 0, e.getMessage()));
                throw e;
            }
            conn.postRecv(0, 2);
            reply(conn, group, new Wire.Message(Wire.MSG_ACCEPTED, id, 0, 0, 0));
            // The server's side always blocks: -m p is how the client waits for its completions, and a
            // polling server would take the CPU from the client (and a software provider's threads).
            Side test = new Side(server.ia, pz, server.attributes, options.timeoutMicros(), false, options.qos());
            try {
                switch (options.test()) {
                    case 'Q' -> quit = true;
                    case 'T' -> transaction(test, options);
                    case 'P' -> new PerformanceSide(test, options).runServer(request(0, options.timeoutMicros()));
                    default -> {
                        // -T F (dataxfer_client): the connection itself is the test
                    }
                }
            } catch (RuntimeException e) {
                failure = e;
            }
            reply(conn, group, new Wire.Message(Wire.MSG_RESULT, failure == null ? 0 : 1, 0, 0, 0,
                    failure == null ? "" : describe(failure)));
            conn.awaitDisconnect("session " + id + ": the control connection");
        } catch (RuntimeException e) {
            failure = failure == null ? e : failure;
        } finally {
            over = true;
            for (CompletableFuture<ConnectionRequest> f : requests.values()) {
                if (!f.complete(null) && f.getNow(null) != null && failure != null) {
                    rejectQuietly(f.getNow(null));
                }
            }
            try {
                if (conn != null) {
                    conn.free();
                }
                if (group != null) {
                    group.free();
                }
                if (pz != null) {
                    pz.free();
                }
            } catch (DatException e) {
                failure = failure == null ? e : failure;
            }
        }
        return new Outcome(id, description, quit, failure);
    }

    private static void rejectQuietly(ConnectionRequest request) {
        try {
            request.reject(new byte[0]);
        } catch (DatException e) {
            // accepted or gone already
        }
    }

    private void reply(Conn conn, Conn.Group group, Wire.Message m) {
        conn.send(0, m, 10 + m.type());
        group.requests.take(10 + m.type(), DtoOperation.SEND, "the reply to the client");
    }

    private void transaction(Side side, DapltestOptions options) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < options.threads(); t++) {
            TransactionSide s = new TransactionSide(side, options, false, t, null, null);
            threads.add(Thread.ofPlatform().name("dapltest-s" + id + "-" + t).start(() -> {
                try {
                    s.run(null, index -> request(index, options.timeoutMicros()));
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        joinAll(threads, options.timeoutMicros(), failure);
    }

    /** Waits for {@code threads}, each bounded by its own waits; the first failure is thrown. */
    static void joinAll(List<Thread> threads, long timeoutMicros, AtomicReference<Throwable> failure) {
        long limitMillis = Math.max(120_000, timeoutMicros / 1_000 * 8);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMillis);
        for (Thread thread : threads) {
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ToolException.failure("interrupted");
            }
            if (thread.isAlive()) {
                throw ToolException.failure(thread.getName() + " did not finish within its wait limits");
            }
        }
        Throwable first = failure.get();
        if (first instanceof ToolException e) {
            throw e;
        }
        if (first != null) {
            throw new ToolException(ToolException.FAILURE, first.toString(), first);
        }
    }

    static String describe(Throwable t) {
        return t instanceof ToolException || t instanceof DatException ? t.getMessage() : t.toString();
    }
}
