package org.jdapl.provider.ofa.rxe;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumSet;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * The connection rate, measured as OFED's {@code dtestcm} measures it, in two processes like it:
 * each side creates its EPs first and busy-polls its EVDs (dtestcm's default); the client connects them in bursts (every connect of a burst
 * posted, then the burst's ESTABLISHED events taken), the server accepts each request with OFED
 * dtest's private data (1..48 in, 2..49 back, both checked) as it comes and then takes the
 * ESTABLISHED events, as dtestcm's server does; then the client disconnects every EP and both take
 * every DISCONNECTED.
 *
 * <pre>ConnRate &lt;device&gt; server|client &lt;connections&gt; &lt;burst&gt; &lt;warm-up rounds&gt; &lt;timed rounds&gt; [&lt;server address&gt;]</pre>
 *
 * Both sides first run the whole cycle {@code warm-up rounds} times untimed (fresh EPs each round,
 * waiting and polling in turn), so that the connection path runs compiled, as in a long-running
 * application; before each timed round they collect and wait until the JIT is idle ({@link #settle}).
 * The work of each connection is in methods called for every connection ({@link #request},
 * {@link #established}, {@link #next}), which the warm-up compiles; the harness runs the methods
 * called once a round ({@code main}, {@code serve}, {@code connect}) interpreted, as a method called
 * once a round would otherwise reach its compile threshold, and be compiled, in a timed round.
 *
 * After the warm-up come {@code timed rounds} pairs of timed rounds: one waits for its events
 * ({@code dat_evd_wait}), one polls them (a single round of 100 connections takes a few hundred
 * milliseconds, and on an emulated CPU shared with the host's other work one round in three or four is
 * off by half or more: the harness takes the median of many). For each the client prints {@code connrate wait|poll <n> <us per connection> <connections
 * per second> <full cycles per second>}: the first two as dtestcm's "Connections: ... usec, CPS ..." (the time until every
 * connection is established at the client), the last over the whole cycle (connect, accept,
 * established on both sides, disconnect, DISCONNECTED on both).
 */
public final class ConnRate {
    static final long CONN_QUAL = 45302;
    /** This round busy-polls its EVDs (dtestcm's default) rather than waiting on them. */
    private static boolean polling;
    private static final long TIMEOUT = 60_000_000;
    /** The threads' scheduler account when the round began (with {@link #THREAD_TIMES}). */
    private static ThreadTimes roundStart;
    /**
     * With {@code -Djdapl.connrate.threadTimes=true}, each timed round also prints where its threads' time
     * went (the scheduler's account); off by default, as reading it costs the round compilations of its own.
     */
    private static final boolean THREAD_TIMES = Boolean.getBoolean("jdapl.connrate.threadTimes");
    /** How long the client gives the server to settle before a timed round. */
    private static final long SERVER_SETTLE_MILLIS = 1_000;
    /** This round is one of the two timed ones. */
    private static boolean timedRound;
    /** The JIT's compilation time when the round began, and how much it grew until all were established. */
    private static long jitAtStart;
    private static long jitInRound;

    private ConnRate() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6 || (args[1].equals("client") && args.length < 7)) {
            System.err.println("usage: ConnRate <device> server|client <connections> <burst> <warm-up rounds>"
                    + " <timed rounds> [<server address>]");
            System.exit(2);
        }
        boolean server = args[1].equals("server");
        int n = Integer.parseInt(args[2]);
        int burst = Math.min(n, Integer.parseInt(args[3]));
        int warmUp = Integer.parseInt(args[4]);
        // warm-up rounds, then pairs of timed rounds: one waiting for events (dat_evd_wait), one polling them
        int rounds = warmUp + 2 * Integer.parseInt(args[5]);
        OfaProvider provider = new OfaProvider();
        InterfaceAdapter ia = provider.open(new IaSpec("ofa-v2-" + args[0] + "-1-rate", args[0] + " 1", "", true,
                "connrate"), 16);
        try {
            ProtectionZone pz = ia.createPz();
            int qlen = Math.min(ia.query().attributes().maxEvdQlen(), 2 * n + 8);
            EventDispatcher conn = ia.createEvd(qlen, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher dto = ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher crEvd = ia.createEvd(qlen, null, EnumSet.of(EvdFlag.CR));
            PublicServicePoint psp = server ? ia.createPsp(CONN_QUAL, crEvd, PspFlag.CONSUMER) : null;
            if (server) {
                System.out.println("listening");
            }
            // The first rounds warm up (the JIT compiles the connection path, as a long-running
            // application has it compiled); the rest are timed.
            for (int round = 0; round < rounds; round++) {
                timedRound = round >= warmUp;
                if (timedRound) {
                    settle();
                    if (!server) {
                        Thread.sleep(SERVER_SETTLE_MILLIS); // the server settles meanwhile
                    }
                }
                // As dtestcm: the EPs are created, then connected at once (a pause between the two, with
                // the vCPU idle, made the connections that followed it slower).
                Endpoint[] eps = new Endpoint[n];
                for (int i = 0; i < n; i++) {
                    eps[i] = ia.createEp(pz, dto, dto, conn, EpAttributes.defaults().withQueueDepths(1, 1));
                }
                // the warm-up alternates, so that both ways of taking events run compiled
                polling = timedRound ? (round - warmUp) % 2 == 1 : round % 2 == 1;
                roundStart = THREAD_TIMES ? ThreadTimes.now() : null;
                jitAtStart = jitMillis();
                if (server) {
                    serve(eps, conn, crEvd);
                } else {
                    connect(eps, conn, burst, InetAddress.getByName(args[6]), timedRound);
                }
                for (Endpoint ep : eps) {
                    ep.free();
                }
            }
            if (psp != null) {
                psp.free();
            }
        } catch (Throwable t) {
            System.out.println("connrate FAILED: " + t);
            System.exit(1);
        } finally {
            ia.close(CloseFlag.ABRUPT);
        }
        System.exit(0);
    }

    /**
     * As dtestcm's server: takes each request and accepts it, and only then takes the ESTABLISHED
     * events (the accepts do not wait for the connections they start).
     */
    private static void serve(Endpoint[] eps, EventDispatcher conn, EventDispatcher crEvd) {
        long waitNanos = 0;
        long acceptNanos = 0;
        long start = System.nanoTime();
        for (Endpoint ep : eps) {
            long t0 = System.nanoTime();
            DatEvent.ConnectionRequest cr = request(crEvd);
            long t1 = System.nanoTime();
            cr.request().accept(ep, InteropPeer.pattern(2));
            acceptNanos += System.nanoTime() - t1;
            waitNanos += t1 - t0;
        }
        long accepted = System.nanoTime();
        for (int i = 0; i < eps.length; i++) {
            expect(next(conn), EventNumber.CONNECTION_ESTABLISHED);
        }
        report("server");
        System.out.printf("server: %d accepted in %.1f ms (waiting for requests %.1f ms, in accept %.1f ms),"
                        + " all established %.1f ms later; the JIT compiled for %d ms meanwhile%n", eps.length,
                (accepted - start) / 1e6, waitNanos / 1e6, acceptNanos / 1e6, (System.nanoTime() - accepted) / 1e6,
                jitInRound);
        for (int i = 0; i < eps.length; i++) {
            expect(next(conn), EventNumber.CONNECTION_DISCONNECTED);
        }
    }

    /** The next event of {@code crEvd}, a connection request with OFED dtest's private data (1..48). */
    private static DatEvent.ConnectionRequest request(EventDispatcher crEvd) {
        DatEvent e = next(crEvd);
        if (!(e instanceof DatEvent.ConnectionRequest cr)) {
            throw new IllegalStateException("expected a connection request, got " + e);
        }
        byte[] data = cr.request().query().privateData();
        if (!Arrays.equals(InteropPeer.pattern(1), Arrays.copyOf(data, 48))) {
            throw new IllegalStateException("the request's private data is not 1..48");
        }
        return cr;
    }

    /** The next event of {@code conn}, ESTABLISHED with the accept's private data (2..49). */
    private static void established(EventDispatcher conn) {
        DatEvent e = next(conn);
        expect(e, EventNumber.CONNECTION_ESTABLISHED);
        if (!Arrays.equals(InteropPeer.pattern(2), Arrays.copyOf(((DatEvent.Connection) e).privateData(), 48))) {
            throw new IllegalStateException("the accept's private data is not 2..49");
        }
    }

    private static void connect(Endpoint[] eps, EventDispatcher conn, int burst, InetAddress server, boolean timed) {
        InetSocketAddress address = new InetSocketAddress(server, 0);
        long postNanos = 0;
        mark();
        long start = System.nanoTime();
        for (int first = 0; first < eps.length; first += burst) {
            int end = Math.min(eps.length, first + burst);
            long t0 = System.nanoTime();
            for (int i = first; i < end; i++) {
                eps[i].connect(address, CONN_QUAL, TIMEOUT, InteropPeer.pattern(1));
            }
            postNanos += System.nanoTime() - t0;
            for (int i = first; i < end; i++) {
                established(conn);
            }
        }
        long connected = System.nanoTime();
        mark();
        report("client");
        for (Endpoint ep : eps) {
            ep.disconnect(CloseFlag.ABRUPT);
        }
        for (int i = 0; i < eps.length; i++) {
            expect(next(conn), EventNumber.CONNECTION_DISCONNECTED);
        }
        long done = System.nanoTime();
        double connectUs = (connected - start) / 1e3 / eps.length;
        System.out.printf("client%s%s: %d connected in %.1f ms (in dat_ep_connect %.1f ms; the JIT compiled for %d ms"
                        + " meanwhile), disconnected in %.1f ms%n", timed ? "" : " (warm-up)", polling ? " polling" : " waiting",
                eps.length, (connected - start) / 1e6, postNanos / 1e6, jitInRound, (done - connected) / 1e6);
        if (timed) {
            System.out.printf("connrate %s %d %.2f %.2f %.2f%n", polling ? "poll" : "wait", eps.length, connectUs,
                    1e6 / connectUs,
                    eps.length / ((done - start) / 1e9));
        }
    }

    /**
     * The next event, busy-polled with {@code dat_evd_dequeue} as dtestcm polls its EVDs by default
     * (it waits only with {@code -w}).
     */
    private static DatEvent next(EventDispatcher evd) {
        if (!polling) {
            return evd.waitEvent(TIMEOUT);
        }
        long deadline = System.nanoTime() + TIMEOUT * 1_000;
        for (int spins = 1; ; spins++) {
            java.util.Optional<DatEvent> e = evd.dequeue();
            if (e.isPresent()) {
                return e.get();
            }
            if ((spins & 0xfff) == 0 && System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no event within " + TIMEOUT / 1_000_000 + " s");
            }
        }
    }

    /**
     * Before a timed round: a full collection, so that no collection pauses the round, and a wait
     * until the JIT has compiled what the warm-up queued (its compilation time stops growing for
     * 300 ms; at most 20 s; at once where the JVM does not tell that time), so that the round runs
     * the compiled path without a compiler thread beside it, as a long-running application does.
     */
    private static void settle() throws InterruptedException {
        System.gc();
        long start = System.nanoTime();
        long last = jitMillis();
        int quiet = 0;
        while (quiet < 3 && System.nanoTime() - start < 20_000_000_000L) {
            Thread.sleep(100);
            long now = jitMillis();
            quiet = now == last ? quiet + 1 : 0;
            last = now;
        }
        System.out.printf("settled in %.1f s%n", (System.nanoTime() - start) / 1e9);
    }

    /** The JIT's total compilation time so far, in milliseconds (0 where the JVM does not tell). */
    private static long jitMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    /** Where the threads' time went in a timed round until every connection was established. */
    private static void report(String side) {
        jitInRound = jitMillis() - jitAtStart;
        if (THREAD_TIMES) {
            // taken in every round, so that the timed ones run it compiled, with nothing left to compile
            String account = ThreadTimes.now().since(roundStart, side + (polling ? " polling" : " waiting"));
            if (timedRound) {
                System.out.print(account);
            }
        }
    }

    /**
     * With {@code -Djdapl.connrate.marker=<insn-marker.so>} (the harness's marker library), the client calls
     * the instruction-counting plugin's marker when a round's connecting begins and when every
     * connection is established, so that a boot with the plugin counts what each vCPU executed for the
     * connections of each round (see insn-count-plugin.c).
     */
    private static final MethodHandle MARKER = marker();

    private static MethodHandle marker() {
        String lib = System.getProperty("jdapl.connrate.marker");
        if (lib == null) {
            return null;
        }
        return Linker.nativeLinker().downcallHandle(SymbolLookup.libraryLookup(Path.of(lib), Arena.global())
                .find("insn_marker").orElseThrow(), FunctionDescriptor.ofVoid());
    }

    /** Calls the marker, if there is one. */
    private static void mark() {
        if (MARKER != null) {
            try {
                MARKER.invokeExact();
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    private static void expect(DatEvent e, EventNumber n) {
        if (e.number() != n) {
            throw new IllegalStateException("expected " + n.datName() + ", got " + e.number().datName());
        }
    }
}
