package org.jdapl.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.emu.EmuProvider;

/**
 * The emulated provider's in-JVM (loopback) fabric against what the JVM itself can do, in one run:
 * 64 B ping-pong and 64 B RDMA Write against bare two-thread hand-offs (a volatile field with both
 * threads spinning; park/unpark), 1 MiB RDMA Write and Read against {@code MemorySegment.copy}, the
 * aggregate message rate of 1, 2, 4 and 8 EP pairs on separate IAs, the tcp fabric's polling consumer
 * against its waiting one, and emu tcp against libfabric's {@code fi_pingpong -p tcp -e msg}.
 *
 * <p>Usage: {@code java -cp jdapl-bench-all.jar org.jdapl.bench.EmuLoopbackBench [seconds [rounds]]}
 * (default 0.5 s per measurement, 5 rounds). The measurements of a round run one after the other and
 * the rounds repeat them, so load from other processes affects both sides of a ratio alike; the
 * table shows medians, and the spread of the rounds beside them.
 */
public final class EmuLoopbackBench {
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);
    private static final String LOOPBACK = "loopback";
    private static final String TCP = "tcp 127.0.0.1:0";
    private static final int[] PAIRS = {1, 2, 4, 8};

    private final long nanos;
    private final int rounds;
    private final List<String> table = new ArrayList<>();
    /** Each measurement's figures per round, and the heap bytes per operation it allocated. */
    private double[][] values;
    private double[][] heap;

    private EmuLoopbackBench(long nanos, int rounds) {
        this.nanos = nanos;
        this.rounds = rounds;
    }

    /** Runs every measurement and prints the table. */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 0.5;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        System.out.printf("jdapl emu loopback fabric vs the JVM: %d interleaved rounds of %s s per measurement, "
                + "medians [min..max] (%d cores, Java %s)%n", rounds, seconds,
                Runtime.getRuntime().availableProcessors(), Runtime.version());
        new EmuLoopbackBench((long) (seconds * 1e9), rounds).run();
    }

    /** A measurement of one round: a figure (us, GB/s or msg/s). */
    @FunctionalInterface
    private interface Measure {
        double once() throws Exception;
    }

    private void run() throws Exception {
        Measure spin = () -> HandOffs.pingPong(HandOffs.Kind.SPIN, nanos);
        Measure park = () -> HandOffs.pingPong(HandOffs.Kind.PARK, nanos);
        Measure copy = () -> copyGBs(1 << 20, nanos);
        List<Measure> all = new ArrayList<>(List.of(spin, park,
            () -> EmuPingPong.run(LOOPBACK, 64, true, false, nanos).median(),
            () -> EmuPingPong.run(LOOPBACK, 64, false, false, nanos).median(),
            () -> rdmaOne(64, false, true), () -> rdmaOne(64, false, false),
            copy, () -> rdmaGBs(1 << 20, false), () -> rdmaGBs(1 << 20, true),
            () -> EmuPingPong.run(TCP, 64, true, false, nanos).median(),
            () -> EmuPingPong.run(TCP, 64, false, false, nanos).median(),
            () -> EmuPingPong.run(TCP, 1 << 20, false, false, nanos).median(),
            () -> EmuPingPong.run(TCP, 1 << 20, true, false, nanos).median(),
            () -> HandOffs.pingPong(HandOffs.Kind.SPIN_64B, nanos),
            () -> EmuPingPong.oneThread(64, nanos).median()));
        for (int pairs : PAIRS) {
            all.add(() -> Streams.rate(pairs, nanos));
        }
        all.add(() -> AgronaPingPong.pingPong(nanos));
        int agrona = all.size() - 1;
        boolean fabric = FiPingPong.available();
        if (fabric) {
            all.add(() -> FiPingPong.rttMicros(64, nanos));
            all.add(() -> FiPingPong.rttMicros(1 << 20, nanos));
        }
        // The one-thread and polling ping-pongs, each next to the same on IAs that count nothing (DAT
        // counters off): what counting costs, the pair measured back to back.
        int counted = all.size();
        all.add(() -> EmuPingPong.oneThread(64, nanos).median());
        all.add(() -> withoutCounters(() -> EmuPingPong.oneThread(64, nanos).median()));
        all.add(() -> EmuPingPong.run(LOOPBACK, 64, true, false, nanos).median());
        all.add(() -> withoutCounters(() -> EmuPingPong.run(LOOPBACK, 64, true, false, nanos).median()));
        // Warm-up (untimed): every path compiled before anything counts.
        for (Measure m : all) {
            m.once();
        }
        double[][] v = new double[all.size()][rounds];
        values = v;
        heap = new double[all.size()][rounds];
        HeapBytes.take();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < all.size(); i++) {
                v[i][r] = all.get(i).once();
                heap[i][r] = HeapBytes.take();
            }
            System.out.printf("  round %d of %d done%n", r + 1, rounds);
        }
        String lb = "emu loopback";
        header();
        ratio("64 B ping-pong, polling", lb, v[2], "volatile spin", v[0], "us", 3, false);
        ratio("64 B ping-pong, polling", lb, v[2], "Agrona OneToOneRingBuffer", v[agrona], "us", 1.5, false);
        // What the polling ping-pong is made of: the least a 64 B message moves between two CPUs, and
        // the provider's own work of a round trip, with no CPU crossed (both ends in one thread).
        ratio("64 B hand-off, polling", "volatile spin + 64 B", v[13], "volatile spin", v[0], "us", 0, false);
        ratio("64 B ping-pong, one thread", lb, v[14], "volatile spin", v[0], "us", 0, false);
        double[] floor = new double[rounds];
        double[] floorHeap = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            floor[r] = v[13][r] + v[14][r];
            floorHeap[r] = heap[13][r] + heap[14][r];
        }
        ratio("64 B ping-pong, polling", lb, v[2], "the two above added", floor, "us", 0, false, heap[2], floorHeap);
        ratio("64 B ping-pong, one thread", lb, v[counted], "counters off", v[counted + 1], "us", 0, false);
        ratio("64 B ping-pong, polling", lb, v[counted + 2], "counters off", v[counted + 3], "us", 0, false);
        ratio("64 B ping-pong, waiting", lb, v[3], "park/unpark", v[1], "us", 1.2, false);
        ratio("64 B RDMA Write, polling", lb, v[4], "volatile spin", v[0], "us", 3, false);
        ratio("64 B RDMA Write, waiting", lb, v[5], "park/unpark", v[1], "us", 1.2, false);
        ratio("1 MiB RDMA Write", lb, v[7], "MemorySegment.copy", v[6], "GB/s", 0.8, true);
        ratio("1 MiB RDMA Read", lb, v[8], "MemorySegment.copy", v[6], "GB/s", 0.8, true);
        for (int k = 0; k < PAIRS.length; k++) {
            ratio("64 B sends, " + PAIRS[k] + " pair(s)", lb, v[15 + k], "1 pair", v[15], "msg/s",
                    k == 0 ? 0 : 0.9, true);
        }
        ratio("64 B ping-pong, tcp", "polling", v[9], "waiting", v[10], "us", 1, false);
        ratio("1 MiB ping-pong, tcp", "polling", v[12], "waiting", v[11], "us", 1, false);
        // fi_pingpong spins on fi_cq_read for every completion: it is compared with a polling consumer.
        if (fabric) {
            ratio("64 B ping-pong, tcp", "emu tcp polling", v[9], "fi_pingpong", v[agrona + 1], "us", 1, false);
            ratio("1 MiB ping-pong, tcp", "emu tcp polling", v[12], "fi_pingpong", v[agrona + 2], "us", 1, false);
        } else {
            table.add("| 64 B / 1 MiB ping-pong, tcp | emu tcp polling | " + fmt(v[9]) + " / " + fmt(v[12])
                    + " us | fi_pingpong | absent (install libfabric-bin) | | | " + HeapBytes.format(median(heap[9]))
                    + " / " + HeapBytes.format(median(heap[12])) + " | - |");
        }
        System.out.println();
        table.forEach(System.out::println);
    }

    /** {@code m} on IAs opened with {@code jdapl.emu.counters=false}: their EPs and EVDs count nothing. */
    private static double withoutCounters(Measure m) throws Exception {
        System.setProperty("jdapl.emu.counters", "false");
        try {
            return m.once();
        } finally {
            System.clearProperty("jdapl.emu.counters");
        }
    }

    private void header() {
        table.add("| measurement | emu | median [min..max] | baseline | median [min..max] | ratio | goal "
                + "| heap B/op | base heap B/op |");
        table.add("|---|---|---|---|---|---|---|---|---|");
    }

    private void ratio(String what, String emuName, double[] emu, String baseName, double[] base, String unit,
                       double goal, boolean higherBetter) {
        ratio(what, emuName, emu, baseName, base, unit, goal, higherBetter, heapOf(emu), heapOf(base));
    }

    /** The heap bytes per operation measured with the figures {@code v} (a row of the table), none if derived. */
    private double[] heapOf(double[] v) {
        for (int i = 0; i < values.length; i++) {
            if (values[i] == v) {
                return heap[i];
            }
        }
        return new double[] {Double.NaN};
    }

    /**
     * A row of the table: the figures of both sides, their ratio and goal, and the heap bytes each side
     * allocated per operation (per round trip, RDMA operation, copy or message).
     */
    private void ratio(String what, String emuName, double[] emu, String baseName, double[] base, String unit,
                       double goal, boolean higherBetter, double[] emuHeap, double[] baseHeap) {
        double r = median(emu) / median(base);
        String g = goal == 0 ? "" : (higherBetter ? ">= " : "<= ") + goal
                + ((higherBetter ? r >= goal : r <= goal) ? " met" : " MISSED");
        table.add(String.format("| %s | %s | %s %s | %s | %s %s | %.2f | %s | %s | %s |", what, emuName, fmt(emu),
                unit, baseName, fmt(base), unit, r, g, HeapBytes.format(median(emuHeap)),
                HeapBytes.format(median(baseHeap))));
    }

    private static String fmt(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return String.format(s[0] >= 1000 ? "%.0f [%.0f..%.0f]" : "%.2f [%.2f..%.2f]", median(s), s[0],
                s[s.length - 1]);
    }

    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    // ------------------------------------------------------------------ RDMA

    /**
     * Median microseconds of a {@code size}-byte RDMA Write with its completion, one in flight, the
     * completion polled or waited for.
     */
    private double rdmaOne(int size, boolean read, boolean poll) {
        return rdmaMedianMicros(size, read, poll);
    }

    /** GB/s of {@code size}-byte RDMA Writes (or Reads), one in flight, from the median operation time. */
    private double rdmaGBs(int size, boolean read) {
        return size / (rdmaMedianMicros(size, read, false) * 1e3);
    }

    private double rdmaMedianMicros(int size, boolean read, boolean poll) {
        EmuProvider p = new EmuProvider();
        BenchSide a = BenchSide.open(p, "bench-a", LOOPBACK);
        BenchSide b = BenchSide.open(p, "bench-b", LOOPBACK);
        try (Arena arena = Arena.ofShared()) {
            Endpoint[] eps = BenchSide.connect(a, b);
            LocalMemoryRegion local = a.lmr(arena.allocate(size, 4096));
            LocalMemoryRegion target = b.lmr(arena.allocate(size, 4096));
            List<LmrTriplet> iov = EmuPingPong.triplet(local, size);
            RmrTriplet remote = new RmrTriplet(target.rmrContext(), target.query().registeredAddress(), size);
            EmuTcpBench.RoundTrips each = new EmuTcpBench.RoundTrips(nanos);
            EventSlot slot = new EventSlot();
            long t0 = System.nanoTime();
            do {
                if (read) {
                    eps[0].postRdmaRead(iov, 0, remote, Dat.COMPLETION_DEFAULT);
                } else {
                    eps[0].postRdmaWrite(iov, 0, remote, Dat.COMPLETION_DEFAULT);
                }
                BenchSide.success(EmuPingPong.next(a.req(), poll, slot));
                t0 = each.add(t0);
            } while (!each.done());
            return each.result().median();
        } finally {
            a.ia().close();
            b.ia().close();
        }
    }

    /** GB/s of {@code MemorySegment.copy} of {@code size} bytes between two native segments (median). */
    static double copyGBs(int size, long nanos) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment from = arena.allocate(size, 4096);
            MemorySegment to = arena.allocate(size, 4096);
            EmuTcpBench.RoundTrips each = new EmuTcpBench.RoundTrips(nanos);
            long t0 = System.nanoTime();
            do {
                MemorySegment.copy(from, 0, to, 0, size);
                t0 = each.add(t0);
            } while (!each.done());
            return size / (each.result().median() * 1e3);
        }
    }

    // ------------------------------------------------------------------ streams

    /**
     * Aggregate messages per second of {@code n} EP pairs, each on two IAs of its own. The heap bytes
     * per message are those the sending and receiving threads allocated over their loops, each
     * counting its own, divided by the messages sent.
     */
    static final class Streams {
        /** Receives a receiver holds; the sender has that many credits. */
        private static final int RECEIVES = 256;
        /** Receives taken between two credit messages. */
        private static final int BATCH = RECEIVES / 4;

        private Streams() {
        }

        static double rate(int n, long nanos) throws Exception {
            EmuProvider p = new EmuProvider();
            List<BenchSide> sides = new ArrayList<>();
            AtomicLong total = new AtomicLong();
            AtomicLong heapBytes = new AtomicLong();
            try (Arena arena = Arena.ofShared()) {
                List<Thread> threads = new ArrayList<>();
                List<CompletableFuture<Void>> done = new ArrayList<>();
                long end = System.nanoTime() + nanos;
                for (int i = 0; i < n; i++) {
                    BenchSide a = BenchSide.open(p, "bench-s" + i, LOOPBACK);
                    BenchSide b = BenchSide.open(p, "bench-r" + i, LOOPBACK);
                    sides.add(a);
                    sides.add(b);
                    Endpoint[] eps = BenchSide.connect(a, b);
                    List<LmrTriplet> data = EmuPingPong.triplet(a.lmr(arena.allocate(64, 64)), 64);
                    List<LmrTriplet> sink = EmuPingPong.triplet(b.lmr(arena.allocate(64, 64)), 64);
                    List<LmrTriplet> credit = EmuPingPong.triplet(b.lmr(arena.allocate(8, 64)), 8);
                    List<LmrTriplet> creditIn = EmuPingPong.triplet(a.lmr(arena.allocate(8, 64)), 8);
                    for (int k = 0; k < RECEIVES; k++) {
                        eps[1].postRecv(sink, k, Dat.COMPLETION_DEFAULT);
                    }
                    for (int k = 0; k < 8; k++) {
                        eps[0].postRecv(creditIn, k, Dat.COMPLETION_DEFAULT);
                    }
                    CompletableFuture<Void> sent = new CompletableFuture<>();
                    CompletableFuture<Void> received = new CompletableFuture<>();
                    done.add(sent);
                    done.add(received);
                    threads.add(Thread.ofPlatform().name("bench-send-" + i).start(() -> {
                        EventSlot slot = new EventSlot();
                        long allocated = HeapBytes.ofThisThread();
                        try {
                            long credits = RECEIVES;
                            long count = 0;
                            while (System.nanoTime() - end < 0) {
                                while (credits == 0) {
                                    a.recv().waitEvent(BenchSide.WAIT, 1, slot);
                                    BenchSide.success(slot);
                                    eps[0].postRecv(creditIn, 0, Dat.COMPLETION_DEFAULT);
                                    credits += BATCH;
                                }
                                eps[0].postSend(data, 0, SUPPRESS);
                                credits--;
                                count++;
                            }
                            heapBytes.addAndGet(HeapBytes.ofThisThread() - allocated);
                            eps[0].postSend(EmuPingPong.triplet(data.get(0).lmr(), 0), 0, SUPPRESS);
                            total.addAndGet(count);
                            sent.complete(null);
                        } catch (RuntimeException e) {
                            sent.completeExceptionally(e);
                        }
                    }));
                    threads.add(Thread.ofPlatform().name("bench-recv-" + i).start(() -> {
                        EventSlot slot = new EventSlot();
                        long allocated = HeapBytes.ofThisThread();
                        try {
                            int taken = 0;
                            while (true) {
                                b.recv().waitEvent(BenchSide.WAIT, 1, slot);
                                BenchSide.success(slot);
                                if (slot.transferredLength() == 0) {
                                    break;
                                }
                                eps[1].postRecv(sink, 0, Dat.COMPLETION_DEFAULT);
                                if (++taken == BATCH) {
                                    taken = 0;
                                    eps[1].postSend(credit, 0, SUPPRESS);
                                }
                            }
                            heapBytes.addAndGet(HeapBytes.ofThisThread() - allocated);
                            received.complete(null);
                        } catch (RuntimeException e) {
                            received.completeExceptionally(e);
                        }
                    }));
                }
                long start = System.nanoTime();
                for (CompletableFuture<Void> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
                long elapsed = System.nanoTime() - start;
                for (Thread t : threads) {
                    t.join();
                }
                HeapBytes.recordBytes(heapBytes.get(), total.get());
                return total.get() / (elapsed / 1e9);
            } finally {
                for (BenchSide s : sides) {
                    s.ia().close();
                }
            }
        }
    }
}
