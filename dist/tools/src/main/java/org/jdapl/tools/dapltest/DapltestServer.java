package org.jdapl.tools.dapltest;

import java.io.PrintStream;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.tools.Events;
import org.jdapl.tools.ToolException;

/**
 * dapltest {@code -T S}: listens on one PSP and gives every client's control connection a
 * {@link Session} on a thread of its own, so that tests run one after another and at once; the
 * test endpoints' connection requests go to their session by the session number in their private
 * data. It stops when a client sends {@code -T Q} (or, in this process, after its one session),
 * waits for the sessions still running, frees its PSP and EVD and closes the IA gracefully, which
 * fails if any object was left behind.
 */
final class DapltestServer implements AutoCloseable {
    private static final long POLL_MICROS = 200_000;

    final InterfaceAdapter ia;
    final IaAttributes attributes;
    final long timeoutMicros;
    private final PrintStream out;
    private final EventDispatcher crEvd;
    private final PublicServicePoint psp;
    private final long connQual;
    private final Map<Integer, Session> sessions = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<Session.Outcome> ended = new LinkedBlockingQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private int nextId = 1;
    private int passed;
    private int failed;

    /**
     * Opens the IA and listens on {@code connQual} (any free one if negative).
     *
     * @throws ToolException FAILURE if the IA cannot be opened or the PSP not created
     */
    DapltestServer(DatRegistry registry, String iaName, long connQual, long timeoutMicros, PrintStream out) {
        this.ia = Dapltest.open(registry, iaName);
        this.timeoutMicros = timeoutMicros;
        this.out = out;
        try {
            attributes = ia.query().attributes();
            crEvd = ia.createEvd(Math.min(attributes.maxEvdQlen(), 256), null, EnumSet.of(EvdFlag.CR));
            psp = connQual < 0 ? ia.createPspAny(crEvd, PspFlag.CONSUMER) : ia.createPsp(connQual, crEvd, PspFlag.CONSUMER);
            this.connQual = psp.query().connQual();
        } catch (DatException e) {
            ia.close();
            throw new ToolException(ToolException.FAILURE, "dapltest server: cannot listen on conn_qual "
                    + Long.toHexString(connQual) + ": " + e.getMessage(), e);
        }
    }

    SocketAddress address() {
        return attributes.address();
    }

    long connQual() {
        return connQual;
    }

    /**
     * Serves until a client sends {@code -T Q}, or until {@code sessions} sessions ended if positive.
     *
     * @return how many sessions failed
     */
    int serve(int maxSessions) {
        boolean stop = false;
        while (!stop || !sessions.isEmpty()) {
            Session.Outcome outcome;
            while ((outcome = ended.poll()) != null) {
                stop |= ended(outcome) || (maxSessions > 0 && passed + failed >= maxSessions);
            }
            if (stop) {
                awaitSessions();
                break;
            }
            DatEvent event;
            try {
                event = crEvd.waitEvent(POLL_MICROS);
            } catch (DatException e) {
                if (e.type() == DatReturnType.TIMEOUT_EXPIRED) {
                    continue;
                }
                throw new ToolException(ToolException.FAILURE, "dapltest server: " + e.getMessage(), e);
            }
            if (event instanceof DatEvent.ConnectionRequest cr) {
                dispatch(cr);
            } else {
                out.println("dapltest server: ignored " + Events.describe(event));
            }
        }
        return failed;
    }

    private void dispatch(DatEvent.ConnectionRequest cr) {
        Wire.Connect c = Wire.parseConnect(cr.request().query().privateData());
        if (c != null && c.kind() == Wire.CONNECT_CONTROL) {
            int id = nextId++;
            Session session = new Session(this, id, cr.request());
            sessions.put(id, session);
            threads.add(Thread.ofPlatform().name("dapltest-session-" + id).start(() -> {
                try {
                    ended.add(session.run());
                } catch (Throwable t) {
                    ended.add(new Session.Outcome(id, "(unknown)", false, t));
                }
            }));
            return;
        }
        Session session = c == null || c.kind() != Wire.CONNECT_DATA ? null : sessions.get(c.session());
        if (session == null) {
            cr.request().reject(new byte[0]);
            out.println("dapltest server: rejected a connection request that belongs to no session");
        } else {
            session.offer(c.index(), cr.request());
        }
    }

    /** Counts and prints an ended session; returns whether it asked the server to stop. */
    private boolean ended(Session.Outcome o) {
        sessions.remove(o.id());
        if (o.failure() == null) {
            passed++;
        } else {
            failed++;
        }
        out.printf("dapltest server: session %d (%s): %s%n", o.id(), o.request(),
                o.failure() == null ? "PASSED" : "FAILED: " + Session.describe(o.failure()));
        out.flush();
        return o.quit();
    }

    private void awaitSessions() {
        long deadline = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(Math.max(60_000_000L, timeoutMicros * 6));
        while (!sessions.isEmpty() && System.nanoTime() < deadline) {
            try {
                Session.Outcome o = ended.poll(POLL_MICROS, TimeUnit.MICROSECONDS);
                if (o != null) {
                    ended(o);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (!sessions.isEmpty()) {
            failed += sessions.size();
            out.println("dapltest server: " + sessions.size() + " session(s) did not end; closing the IA");
            ia.close();
        }
    }

    int passed() {
        return passed;
    }

    /**
     * Frees the PSP and the EVD and closes the IA gracefully.
     *
     * @throws ToolException FAILURE if an object of a session was left behind
     */
    void closeGracefully() {
        try {
            psp.free();
            crEvd.free();
            ia.close(CloseFlag.GRACEFUL);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "dapltest server: closing the IA gracefully failed"
                    + " (an object was left behind): " + e.getMessage(), e);
        }
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                throw ToolException.failure("dapltest server: " + t.getName() + " is still running");
            }
        }
    }

    /** Closes the IA abruptly if it is still open. */
    @Override
    public void close() {
        try {
            if (!ia.isFreed()) {
                ia.close();
            }
        } catch (DatException e) {
            // closed already
        }
    }
}
