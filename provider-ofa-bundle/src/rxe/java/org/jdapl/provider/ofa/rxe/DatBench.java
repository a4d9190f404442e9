package org.jdapl.provider.ofa.rxe;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jdapl.bench.CpuPinning;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;
import org.jdapl.provider.ofa.RawVerbsPingPong;

/**
 * The measurements of perftest's {@code ib_send_lat} and {@code ib_write_bw}, through the DAT API on
 * the OFA provider: a send/recv ping-pong between two EPs (each side busy-polls its EVD with
 * {@code dat_evd_dequeue}, as perftest busy-polls its CQ) and a stream of 64 KiB RDMA Writes with
 * 128 outstanding.
 *
 * <p>{@code java ... DatBench <device> <latency iterations> <bandwidth iterations> [<client CPU>
 * <server CPU>]} connects, warms up until the JIT has stopped compiling and prints
 * {@code warmup <s> jit <ms>}. With the two CPUs, the measuring thread (the ping-pong's client and the
 * writer) is bound to the first and every ping-pong's server thread to the second, as
 * {@code taskset -c} binds perftest's two processes. Then it reads commands
 * from standard input, one a line, so that the caller can run perftest between its rounds and an
 * emulated CPU's slow and fast phases fall on both alike:
 * <ul>
 * <li>{@code lat <bytes>} prints {@code lat<bytes> <us>}, the median half round trip (as perftest's
 *     t_typical);</li>
 * <li>{@code floor <bytes>} prints {@code floor<bytes> <us>}, the same for the same ping-pong in
 *     bare verbs ({@link RawVerbsPingPong}): what the JVM and the downcalls cost without DAT;</li>
 * <li>{@code spin} prints {@code spin <ns> <ns>}: an empty {@code dat_evd_dequeue} and an empty bare
 *     {@code ibv_poll_cq} of the same CQ;</li>
 * <li>{@code bw} prints {@code bw64k <MB/s>} (MB = 2^20 bytes, as perftest);</li>
 * <li>{@code quit} or the end of input closes everything.</li>
 * </ul>
 */
public final class DatBench {
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);
    private static final long TIMEOUT = TimeUnit.SECONDS.toMicros(30);
    /** The warm-up runs at least this long, and until the JIT has compiled nothing for {@link #JIT_QUIET}. */
    private static final long WARMUP_MIN = TimeUnit.SECONDS.toNanos(10);
    private static final long JIT_QUIET = TimeUnit.SECONDS.toNanos(5);
    /** ... but no longer than this (an emulated CPU compiles slowly). */
    private static final long WARMUP_MAX = TimeUnit.SECONDS.toNanos(180);

    private DatBench() {
    }

    /** The ping-pong EP's queue depths, and its EVD's room beyond them (connection events). */
    private static final int PING_RECVS = 16;
    private static final int PING_SENDS = 64;
    private static final int PING_OTHER_EVENTS = 16;

    /**
     * One side: IA and PZ; for the ping-pong an EP with short queues and a small EVD (perftest's
     * latency test uses queues of a few entries: rings that stay within a few pages), for the RDMA
     * Writes an EP and EVD with room for 128 outstanding requests. Each EVD takes all of its EP's events
     * and has room for every DTO its EP can have outstanding, as perftest sizes its CQs for its queues
     * and as the DAT specification asks of a consumer (an EVD that can overflow loses events); the
     * provider then reserves CQ room once, at dat_ep_create, instead of at every post.
     */
    record Side(InterfaceAdapter ia, ProtectionZone pz, EventDispatcher evd, Endpoint ep,
                EventDispatcher bwEvd, Endpoint bwEp) {
        static Side open(OfaProvider provider, String device, String suffix) {
            InterfaceAdapter ia = provider.open(new IaSpec("ofa-v2-" + device + "-1-" + suffix, device + " 1", "",
                    true, "bench"), 16);
            ProtectionZone pz = ia.createPz();
            EnumSet<EvdFlag> all = EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR);
            EventDispatcher evd = ia.createEvd(PING_RECVS + PING_SENDS + PING_OTHER_EVENTS, null, all);
            Endpoint ep = ia.createEp(pz, evd, evd, evd,
                    EpAttributes.defaults().withQueueDepths(PING_RECVS, PING_SENDS));
            EventDispatcher bwEvd = ia.createEvd(1024, null, all);
            Endpoint bwEp = ia.createEp(pz, bwEvd, bwEvd, bwEvd, null);
            return new Side(ia, pz, evd, ep, bwEvd, bwEp);
        }
    }

    /**
     * Connects, warms up and runs the measurements that standard input asks for.
     *
     * @param args device, latency iterations, bandwidth iterations
     */
    public static void main(String[] args) throws Exception {
        String device = args.length > 0 ? args[0] : "rxe0";
        int latIters = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        int bwIters = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int clientCpu = args.length > 4 ? Integer.parseInt(args[3]) : -1;
        int serverCpu = args.length > 4 ? Integer.parseInt(args[4]) : -1;
        CpuPinning.bind(clientCpu);
        Executor serverThread = r -> Thread.ofPlatform().name("bench-server").start(() -> {
            CpuPinning.bind(serverCpu);
            r.run();
        });
        OfaProvider provider = new OfaProvider();
        Side a = Side.open(provider, device, "a");
        Side b = Side.open(provider, device, "b");
        try (Arena arena = Arena.ofShared()) {
            connect(a.ia, a.ep, a.evd, b.ia, b.ep, b.evd);
            connect(a.ia, a.bwEp, a.bwEvd, b.ia, b.bwEp, b.bwEvd);
            LocalMemoryRegion la = a.ia.createLmr(a.pz, arena.allocate(1 << 20, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            LocalMemoryRegion lb = b.ia.createLmr(b.pz, arena.allocate(1 << 20, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            warmUp(a, b, la, lb, serverThread);
            System.err.printf("clock read %.0f ns (median of back-to-back System.nanoTime calls)%n", clockRead());
            writes(a, la, lb, Math.max(100, bwIters / 4));
            // One more untimed ping-pong of each size after the writes: without it the first measured
            // round took twice as long as the others in two runs out of two.
            pingPong(a, b, la, lb, 2, latIters, serverThread);
            pingPong(a, b, la, lb, 64, latIters, serverThread);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
            String line;
            while ((line = in.readLine()) != null) {
                String[] cmd = line.trim().split("\\s+");
                switch (cmd[0]) {
                    case "lat" -> {
                        int size = Integer.parseInt(cmd[1]);
                        System.out.printf("lat%d %.2f%n", size, pingPong(a, b, la, lb, size, latIters, serverThread));
                    }
                    case "floor" -> {
                        int size = Integer.parseInt(cmd[1]);
                        System.out.printf("floor%d %.2f%n", size,
                                floor(a, b, la, lb, size, latIters, serverThread));
                    }
                    case "spin" -> System.out.printf("spin %.1f %.1f%n", emptyDequeue(a.evd, 100_000),
                            RawVerbsPingPong.emptyPoll(a.ep, 100_000));
                    case "bw" -> System.out.printf("bw64k %.2f%n", writes(a, la, lb, bwIters));
                    case "quit" -> {
                        return;
                    }
                    case "" -> { }
                    default -> System.out.println("unknown command: " + line);
                }
                System.out.flush();
            }
        } finally {
            a.ia.close();
            b.ia.close();
        }
    }

    /** Both measurements until the JIT has finished with the data path ({@link #untilJitQuiet}). */
    private static void warmUp(Side a, Side b, LocalMemoryRegion la, LocalMemoryRegion lb, Executor serverThread)
            throws Exception {
        untilJitQuiet(() -> {
            pingPong(a, b, la, lb, 2, 300, serverThread);
            pingPong(a, b, la, lb, 64, 100, serverThread);
            floor(a, b, la, lb, 2, 300, serverThread);
            writes(a, la, lb, 64);
        }, WARMUP_MIN, JIT_QUIET, WARMUP_MAX);
    }

    /** One round of a warm-up. */
    interface WarmUpRound {
        void run() throws Exception;
    }

    /**
     * Runs {@code round} again and again for at least {@code min} nanoseconds, then until the JIT's
     * total compilation time has not grown for {@code quiet} (under an emulated CPU the optimising
     * compiler takes tens of seconds), but no longer than {@code max}. Prints {@code warmup <s> jit <ms>}.
     */
    static void untilJitQuiet(WarmUpRound round, long min, long quiet, long max) throws Exception {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
        long start = System.nanoTime();
        long lastJit = timed ? jit.getTotalCompilationTime() : 0;
        long lastChange = start;
        while (true) {
            round.run();
            long now = System.nanoTime();
            long total = timed ? jit.getTotalCompilationTime() : 0;
            if (total != lastJit) {
                lastJit = total;
                lastChange = now;
            }
            if (now - start >= max || (now - start >= min && (!timed || now - lastChange >= quiet))) {
                System.out.printf("warmup %.1f jit %d%n", (now - start) / 1e9, lastJit);
                System.out.flush();
                return;
            }
        }
    }

    /** The median time between two back-to-back {@code System.nanoTime()} calls, in nanoseconds. */
    static double clockRead() {
        long[] d = new long[20001];
        for (int i = 0; i < d.length; i++) {
            long t0 = System.nanoTime();
            d[i] = System.nanoTime() - t0;
        }
        Arrays.sort(d);
        return d[d.length / 2];
    }

    static void connect(InterfaceAdapter iaA, Endpoint epA, EventDispatcher evdA, InterfaceAdapter iaB,
                        Endpoint epB, EventDispatcher evdB) {
        PublicServicePoint psp = iaB.createPspAny(evdB, PspFlag.CONSUMER);
        SocketAddress addr = iaB.query().attributes().address();
        epA.connect(addr, psp.query().connQual(), TIMEOUT, new byte[0]);
        DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) evdB.waitEvent(TIMEOUT);
        cr.request().accept(epB, new byte[0]);
        expect(evdB.waitEvent(TIMEOUT), EventNumber.CONNECTION_ESTABLISHED);
        expect(evdA.waitEvent(TIMEOUT), EventNumber.CONNECTION_ESTABLISHED);
        psp.free();
    }

    private static void expect(DatEvent e, EventNumber n) {
        if (e.number() != n) {
            throw new IllegalStateException("expected " + n + " but got " + e);
        }
    }

    /**
     * Busy-polls the EVD for the next reported receive completion, until {@code deadline}
     * ({@link System#nanoTime}). Like perftest's loop around ibv_poll_cq, it has no spin-wait hint:
     * under an emulated CPU a PAUSE leaves the translated code for the emulator's main loop. Returns the
     * dequeues that found nothing.
     */
    static int awaitReceive(EventDispatcher evd, long deadline) {
        int empty = 0;
        for (int spins = 1; ; spins++) {
            Optional<DatEvent> e = evd.dequeue();
            if (e.isPresent()) {
                if (e.get() instanceof DatEvent.DtoCompletion d && d.status() == DtoStatus.SUCCESS) {
                    if (d.operation() == org.jdapl.dat.DtoOperation.RECEIVE) {
                        return empty;
                    }
                    continue;
                }
                throw new IllegalStateException("unexpected " + e.get());
            }
            empty++;
            if ((spins & 0xfff) == 0 && System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no receive completion within the time limit");
            }
        }
    }

    /**
     * The median half round trip of {@code iters} ping-pongs of {@code size} bytes, in microseconds,
     * timed from post to post as perftest times them.
     */
    private static double pingPong(Side a, Side b, LocalMemoryRegion la, LocalMemoryRegion lb, int size, int iters,
                                   Executor serverThread) throws Exception {
        List<LmrTriplet> sendA = List.of(new LmrTriplet(la, 0, size));
        List<LmrTriplet> recvA = List.of(new LmrTriplet(la, 4096, size));
        List<LmrTriplet> sendB = List.of(new LmrTriplet(lb, 0, size));
        List<LmrTriplet> recvB = List.of(new LmrTriplet(lb, 4096, size));
        a.ep.postRecv(recvA, 1, Dat.COMPLETION_DEFAULT);
        b.ep.postRecv(recvB, 1, Dat.COMPLETION_DEFAULT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < iters; i++) {
                awaitReceive(b.evd, deadline);
                if (i + 1 < iters) {
                    b.ep.postRecv(recvB, 1, Dat.COMPLETION_DEFAULT);
                }
                b.ep.postSend(sendB, 2, SUPPRESS);
            }
        }, serverThread);
        long[] posted = new long[iters];
        for (int i = 0; i < iters; i++) {
            posted[i] = System.nanoTime();
            a.ep.postSend(sendA, 2, SUPPRESS);
            awaitReceive(a.evd, deadline);
            if (i + 1 < iters) {
                a.ep.postRecv(recvA, 1, Dat.COMPLETION_DEFAULT);
            }
        }
        server.get(60, TimeUnit.SECONDS);
        return RawVerbsPingPong.medianHalfRoundTrip(posted);
    }

    /** Nanoseconds per {@code dat_evd_dequeue} of an empty EVD, over {@code n} calls. */
    static double emptyDequeue(EventDispatcher evd, int n) {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            if (evd.dequeue().isPresent()) {
                throw new IllegalStateException("the EVD was not empty");
            }
        }
        return (double) (System.nanoTime() - t0) / n;
    }

    /**
     * The same ping-pong with bare verbs on the same queue pairs ({@link RawVerbsPingPong}): the floor
     * that the JVM and the downcalls leave, below the DAT layer. Each EP first completes a signalled
     * request, which retires its suppressed sends, so that the bare loop finds no DAT completion to come.
     */
    private static double floor(Side a, Side b, LocalMemoryRegion la, LocalMemoryRegion lb, int size, int iters,
                                Executor serverThread) throws Exception {
        quiesce(a, lb);
        quiesce(b, la);
        return RawVerbsPingPong.pingPong(a.ep, b.ep, la, lb, size, iters, serverThread);
    }

    /** An empty RDMA Write to the peer, completed: every request of the side before it is retired. */
    static void quiesce(Side s, LocalMemoryRegion peer) {
        var q = peer.query();
        long cookie = -42;
        s.ep.postRdmaWrite(List.of(), cookie, new RmrTriplet(q.rmrContext(), q.registeredAddress(), 0),
                Dat.COMPLETION_DEFAULT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Optional<DatEvent> e = s.evd.dequeue();
            if (e.isPresent()) {
                if (!(e.get() instanceof DatEvent.DtoCompletion d && d.status() == DtoStatus.SUCCESS)) {
                    throw new IllegalStateException("unexpected " + e.get());
                }
                if (d.cookie() == cookie) {
                    return;
                }
            } else if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the empty RDMA Write did not complete");
            }
        }
    }

    /** MB/s (2^20 bytes) of {@code iters} RDMA Writes of 64 KiB with up to 128 outstanding. */
    private static double writes(Side a, LocalMemoryRegion la, LocalMemoryRegion lb, int iters) {
        int size = 65536;
        int depth = 128;
        int every = 16;
        List<LmrTriplet> src = List.of(new LmrTriplet(la, 0, size));
        var q = lb.query();
        RmrTriplet dst = new RmrTriplet(q.rmrContext(), q.registeredAddress(), size);
        long start = System.nanoTime();
        int posted = 0;
        int done = 0;
        while (done < iters) {
            while (posted < iters && posted - done < depth) {
                boolean report = (posted + 1) % every == 0 || posted + 1 == iters;
                a.bwEp.postRdmaWrite(src, posted + 1, dst, report ? Dat.COMPLETION_DEFAULT : SUPPRESS);
                posted++;
            }
            Optional<DatEvent> e = a.bwEvd.dequeue();
            if (e.isPresent()) {
                if (!(e.get() instanceof DatEvent.DtoCompletion d) || d.status() != DtoStatus.SUCCESS) {
                    throw new IllegalStateException("unexpected " + e.get());
                }
                done = (int) d.cookie();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        return (double) iters * size / (1 << 20) / seconds;
    }
}
