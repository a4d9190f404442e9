package org.jdapl.bench;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.provider.emu.EmuProvider;

/**
 * A send/recv ping-pong between two IAs of the emulated provider in one JVM: the client posts a send
 * and takes the answer from its receive EVD, the echo thread takes the receive, reposts it and sends
 * back (sends with {@code SUPPRESS}, receives pre-posted). Both ends either poll their EVD
 * ({@code dat_evd_dequeue} in a loop) or block in {@code dat_evd_wait}.
 */
final class EmuPingPong {
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);
    /** How long a polling loop spins before it yields its CPU once. */
    static final long YIELD_AFTER_NANOS = 2_000;

    private EmuPingPong() {
    }

    /**
     * The next event of {@code evd} in the caller's {@code slot} (returned): polled until one is there
     * ({@code dat_evd_dequeue}), or waited for ({@code dat_evd_wait}).
     */
    static EventSlot next(EventDispatcher evd, boolean poll, EventSlot slot) {
        if (!poll) {
            evd.waitEvent(BenchSide.WAIT, 1, slot);
            return slot;
        }
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MICROSECONDS.toNanos(BenchSide.WAIT);
        long lastYield = start;
        while (true) {
            if (evd.dequeue(slot)) {
                return slot;
            }
            long now = System.nanoTime();
            if (now - deadline > 0) {
                throw new IllegalStateException("no event within " + BenchSide.WAIT + " us");
            }
            lastYield = spin(now, lastYield);
        }
    }

    /**
     * Round trips of {@code size}-byte messages on IAs opened with {@code iaParams}.
     *
     * @param poll whether both ends poll rather than wait
     * @param pin whether both ends are bound to the measuring thread's CPU
     */
    static EmuTcpBench.Result run(String iaParams, int size, boolean poll, boolean pin, long nanos) throws Exception {
        EmuProvider p = new EmuProvider();
        BenchSide a = BenchSide.open(p, "bench-a", iaParams);
        BenchSide b = BenchSide.open(p, "bench-b", iaParams);
        try (Arena arena = Arena.ofShared()) {
            Ends ends = Ends.connect(a, b, arena, size);
            Endpoint[] eps = ends.eps();
            List<LmrTriplet> sendA = ends.sendA();
            List<LmrTriplet> recvA = ends.recvA();
            List<LmrTriplet> sendB = ends.sendB();
            List<LmrTriplet> recvB = ends.recvB();
            CompletableFuture<Void> echo = new CompletableFuture<>();
            int cpu = pin ? CpuPinning.currentCpu() : -1;
            Thread server = Thread.ofPlatform().name("bench-echo").start(() -> {
                CpuPinning.pin(cpu);
                EventSlot slot = new EventSlot();
                try {
                    while (true) {
                        EventSlot e = next(b.recv(), poll, slot);
                        if (e.isDtoCompletion() && e.transferredLength() == 0) {
                            break;
                        }
                        BenchSide.success(e);
                        eps[1].postRecv(recvB, 0, Dat.COMPLETION_DEFAULT);
                        eps[1].postSend(sendB, 0, SUPPRESS);
                    }
                    echo.complete(null);
                } catch (RuntimeException ex) {
                    echo.completeExceptionally(ex);
                }
            });
            EmuTcpBench.RoundTrips rtt = new EmuTcpBench.RoundTrips(nanos);
            EventSlot slot = new EventSlot();
            Runnable unpin = CpuPinning.pin(cpu);
            try {
                long t0 = System.nanoTime();
                do {
                    eps[0].postSend(sendA, 0, SUPPRESS);
                    BenchSide.success(next(a.recv(), poll, slot));
                    eps[0].postRecv(recvA, 0, Dat.COMPLETION_DEFAULT);
                    t0 = rtt.add(t0);
                } while (!rtt.done());
            } finally {
                unpin.run();
            }
            eps[0].postSend(triplet(sendA.get(0).lmr(), 0), 0, SUPPRESS);
            echo.get(30, TimeUnit.SECONDS);
            server.join();
            return rtt.result();
        } finally {
            a.ia().close();
            b.ia().close();
        }
    }

    /**
     * The connected EPs of a ping-pong ({@code a}'s first) and each end's send and receive buffers of
     * {@code size} bytes, a receive pre-posted at each end.
     */
    private record Ends(Endpoint[] eps, List<LmrTriplet> sendA, List<LmrTriplet> recvA, List<LmrTriplet> sendB,
                        List<LmrTriplet> recvB) {
        static Ends connect(BenchSide a, BenchSide b, Arena arena, int size) {
            Ends e = new Ends(BenchSide.connect(a, b), triplet(a.lmr(arena.allocate(size, 64)), size),
                    triplet(a.lmr(arena.allocate(size, 64)), size), triplet(b.lmr(arena.allocate(size, 64)), size),
                    triplet(b.lmr(arena.allocate(size, 64)), size));
            e.eps[0].postRecv(e.recvA, 0, Dat.COMPLETION_DEFAULT);
            e.eps[1].postRecv(e.recvB, 0, Dat.COMPLETION_DEFAULT);
            return e;
        }
    }

    /** Round trips timed together by {@link #oneThread}, so that its figure holds no clock reads. */
    private static final int ONE_THREAD_BATCH = 32;

    /**
     * Round trips of the same ping-pong on the loopback fabric with both ends driven by the calling
     * thread: the provider's own work of a round trip (two sends, two dequeues, two reposted receives)
     * with no CPU crossed, since a loopback send completes before its post returns. Round trips are
     * timed {@value #ONE_THREAD_BATCH} at a time and the figures divided, so that the loop's clock
     * reads, which the two-thread loops pay on their waits, are not counted as the provider's work.
     */
    static EmuTcpBench.Result oneThread(int size, long nanos) throws Exception {
        EmuProvider p = new EmuProvider();
        BenchSide a = BenchSide.open(p, "bench-a", "loopback");
        BenchSide b = BenchSide.open(p, "bench-b", "loopback");
        try (Arena arena = Arena.ofShared()) {
            Ends e = Ends.connect(a, b, arena, size);
            EventSlot slot = new EventSlot();
            EmuTcpBench.RoundTrips rtt = new EmuTcpBench.RoundTrips(nanos);
            long t0 = System.nanoTime();
            do {
                for (int i = 0; i < ONE_THREAD_BATCH; i++) {
                    e.eps[0].postSend(e.sendA, 0, SUPPRESS);
                    BenchSide.success(queued(b.recv(), slot));
                    e.eps[1].postRecv(e.recvB, 0, Dat.COMPLETION_DEFAULT);
                    e.eps[1].postSend(e.sendB, 0, SUPPRESS);
                    BenchSide.success(queued(a.recv(), slot));
                    e.eps[0].postRecv(e.recvA, 0, Dat.COMPLETION_DEFAULT);
                }
                t0 = rtt.add(t0);
            } while (!rtt.done());
            EmuTcpBench.Result r = rtt.result();
            HeapBytes.perBatch(ONE_THREAD_BATCH);
            return new EmuTcpBench.Result(r.median() / ONE_THREAD_BATCH, r.mean() / ONE_THREAD_BATCH);
        } finally {
            a.ia().close();
            b.ia().close();
        }
    }

    /**
     * Messages of {@code size} bytes on IAs opened with {@code iaParams}, both ends driven by the
     * calling thread by polling, as an event loop serving several EVDs does: a receive posted on B, a
     * send (signalled) on A, B's receive EVD polled until the receive completes, then A's request EVD
     * until the send completes. On tcp the send completes with the peer's ACK, so each message is a
     * round trip on the wire; the figure is the time per message.
     */
    static EmuTcpBench.Result pollingOneThread(String iaParams, int size, long nanos) throws Exception {
        EmuProvider p = new EmuProvider();
        BenchSide a = BenchSide.open(p, "bench-a", iaParams);
        BenchSide b = BenchSide.open(p, "bench-b", iaParams);
        try (Arena arena = Arena.ofShared()) {
            Endpoint[] eps = BenchSide.connect(a, b);
            List<LmrTriplet> send = triplet(a.lmr(arena.allocate(size, 64)), size);
            List<LmrTriplet> recv = triplet(b.lmr(arena.allocate(size, 64)), size);
            EventSlot slot = new EventSlot();
            EmuTcpBench.RoundTrips rtt = new EmuTcpBench.RoundTrips(nanos);
            long t0 = System.nanoTime();
            do {
                eps[1].postRecv(recv, 0, Dat.COMPLETION_DEFAULT);
                eps[0].postSend(send, 0, Dat.COMPLETION_DEFAULT);
                BenchSide.success(next(b.recv(), true, slot));
                BenchSide.success(next(a.req(), true, slot));
                t0 = rtt.add(t0);
            } while (!rtt.done());
            return rtt.result();
        } finally {
            a.ia().close();
            b.ia().close();
        }
    }

    /** The event a completed post queued on {@code evd}. */
    private static EventSlot queued(EventDispatcher evd, EventSlot slot) {
        if (!evd.dequeue(slot)) {
            throw new IllegalStateException("a loopback post left no event");
        }
        return slot;
    }

    /**
     * One turn of a polling loop at time {@code now}: a spin-wait hint, and a yield once the poller has
     * spun {@link #YIELD_AFTER_NANOS} since its last yield, so that a poller sharing its CPU with the
     * thread it waits for lets that thread run rather than spinning out its time slice. The bare
     * hand-offs poll the same way, so both sides of a ratio pay the same when CPUs are short.
     *
     * @return the time of the last yield
     */
    static long spin(long now, long lastYield) {
        if (now - lastYield > YIELD_AFTER_NANOS) {
            Thread.yield();
            return now;
        }
        Thread.onSpinWait();
        return lastYield;
    }

    static List<LmrTriplet> triplet(LocalMemoryRegion lmr, long length) {
        return List.of(new LmrTriplet(lmr, 0, length));
    }
}
