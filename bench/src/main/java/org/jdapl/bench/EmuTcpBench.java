package org.jdapl.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.emu.EmuProvider;

/**
 * The emulated provider's tcp fabric against plain NIO on loopback, in one run: send/recv ping-pong
 * latency at 64 B, and RDMA Write bandwidth at 4 KiB, 64 KiB and 1 MiB against a stream of the same
 * message sizes over blocking {@link SocketChannel}s. Prints a table with the ratios emu/NIO, and two
 * of emu against emu: a polling consumer against a waiting one, and one thread polling the EVDs of
 * both ends of a connection (64 B send/recv) against the two-thread polling round trip.
 *
 * <p>Usage: {@code java -jar jdapl-bench-all.jar [seconds-per-measurement [rounds]]} (default 1.5 s, 3
 * rounds). Emu and NIO measurements alternate, and the table shows the median of the rounds, so that
 * load from other processes affects both alike.
 */
public final class EmuTcpBench {
    private static final long WAIT = BenchSide.WAIT;
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);

    private EmuTcpBench() {
    }

    /** Runs every measurement and prints the table. */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1.5;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long nanos = (long) (seconds * 1e9);
        List<String[]> rows = new ArrayList<>();
        System.out.printf("jdapl emu tcp fabric vs plain NIO on loopback: %d interleaved rounds of %s s per "
                + "measurement, medians (%d cores, Java %s)%n", rounds, seconds,
                Runtime.getRuntime().availableProcessors(), Runtime.version());
        System.out.println(CpuPinning.available()
                ? "ping-pong: both ends bound to the CPU the measuring thread runs on (sched_setaffinity)"
                : "ping-pong: ends not bound to a CPU (no sched_setaffinity here)");
        // Warm-up (untimed): the provider's code paths are compiled before anything is measured.
        long warm = (long) Math.max(2e9, nanos);
        emuPingPong(64, warm);
        nioPingPong(64, nanos / 2);
        emuWriteBandwidth(64 << 10, warm / 2);
        nioBandwidth(64 << 10, nanos / 2);
        double[] emuLat = new double[rounds];
        double[] nioLat = new double[rounds];
        double[] emuHeap = new double[rounds];
        double[] nioHeap = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            Result emu = emuPingPong(64, nanos);
            emuHeap[r] = HeapBytes.take();
            Result nio = nioPingPong(64, nanos);
            nioHeap[r] = HeapBytes.take();
            emuLat[r] = emu.median();
            nioLat[r] = nio.median();
            System.out.printf("  round %d: ping-pong RTT median (mean) emu %.1f (%.1f) us, NIO %.1f (%.1f) us%n", r + 1,
                    emu.median(), emu.mean(), nio.median(), nio.mean());
        }
        rows.add(row("send/recv ping-pong RTT", "64 B", median(emuLat), median(nioLat), "us", 1.5, false,
                median(emuHeap), median(nioHeap)));
        // A consumer polling with dequeue() against one blocking in waitEvent, ends not bound (a poller
        // bound to its peer's CPU would only spin out its time slice).
        double[] polling = new double[rounds];
        double[] waiting = new double[rounds];
        double[] pollingHeap = new double[rounds];
        double[] waitingHeap = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            polling[r] = EmuPingPong.run("tcp 127.0.0.1:0", 64, true, false, nanos).median();
            pollingHeap[r] = HeapBytes.take();
            waiting[r] = EmuPingPong.run("tcp 127.0.0.1:0", 64, false, false, nanos).median();
            waitingHeap[r] = HeapBytes.take();
            System.out.printf("  round %d: unbound ping-pong RTT median polling %.1f us, waiting %.1f us%n", r + 1,
                    polling[r], waiting[r]);
        }
        // One thread polling the EVDs of both ends (an event loop) against the two-thread polling round trip,
        // compared by their means: a message that waits for an I/O thread's turn now and then shows there.
        double[] oneThread = new double[rounds];
        double[] twoThreads = new double[rounds];
        double[] oneHeap = new double[rounds];
        double[] twoHeap = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            Result one = EmuPingPong.pollingOneThread("tcp 127.0.0.1:0", 64, nanos);
            oneHeap[r] = HeapBytes.take();
            Result two = EmuPingPong.run("tcp 127.0.0.1:0", 64, true, false, nanos);
            twoHeap[r] = HeapBytes.take();
            oneThread[r] = one.mean();
            twoThreads[r] = two.mean();
            System.out.printf("  round %d: 64 B send/recv mean (median), one thread polling both EVDs %.1f (%.1f) us per "
                    + "message, two threads polling %.1f (%.1f) us per round trip, ratio of means %.2f%n", r + 1,
                    one.mean(), one.median(), two.mean(), two.median(), one.mean() / two.mean());
        }
        for (int size : new int[] {4 << 10, 64 << 10, 1 << 20}) {
            double[] emu = new double[rounds];
            double[] nio = new double[rounds];
            double[] emuBw = new double[rounds];
            double[] nioBw = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                emu[r] = emuWriteBandwidth(size, nanos);
                emuBw[r] = HeapBytes.take();
                nio[r] = nioBandwidth(size, nanos);
                nioBw[r] = HeapBytes.take();
                System.out.printf("  round %d: %s RDMA Write emu %.0f MiB/s, NIO stream %.0f MiB/s%n", r + 1,
                        label(size), emu[r], nio[r]);
            }
            rows.add(row("RDMA Write bandwidth", label(size), median(emu), median(nio), "MiB/s",
                    size == 1 << 20 ? 0.8 : 0, true, median(emuBw), median(nioBw)));
        }
        table(rows, "emu tcp", "plain NIO", "emu/NIO");
        table(List.<String[]>of(row("ping-pong RTT, unbound", "64 B", median(polling), median(waiting), "us", 1.0,
                false, median(pollingHeap), median(waitingHeap))), "emu polling", "emu waiting", "pol/wait");
        table(List.<String[]>of(row("send/recv, polling, mean", "64 B", median(oneThread), median(twoThreads), "us",
                2.0, false, median(oneHeap), median(twoHeap))), "one thread", "two threads", "one/two");
    }

    /**
     * Prints a table: each row's figures, ratio and goal, and beside them the heap bytes each side
     * allocated per operation (round trip or RDMA Write; a NIO stream's write).
     */
    private static void table(List<String[]> rows, String left, String right, String ratio) {
        String format = "| %-24s | %-6s | %12s | %12s | %8s | %-13s | %9s | %9s |%n";
        System.out.println();
        System.out.printf(format, "measurement", "size", left, right, ratio, "goal", "heap B/op", "base B/op");
        System.out.println("|--------------------------|--------|--------------|--------------|----------|---------------"
                + "|-----------|-----------|");
        for (String[] r : rows) {
            System.out.printf(format, (Object[]) r);
        }
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        java.util.Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String[] row(String what, String size, double emu, double nio, String unit, double goal,
                                boolean higherBetter, double emuHeap, double nioHeap) {
        double ratio = emu / nio;
        String g = goal == 0 ? "" : (higherBetter ? ">= " : "<= ") + goal + (higherBetter == (ratio >= goal)
                || (!higherBetter && ratio <= goal) ? " met" : " MISSED");
        return new String[] {what, size, String.format("%.1f %s", emu, unit), String.format("%.1f %s", nio, unit),
            String.format("%.2f", ratio), g, HeapBytes.format(emuHeap), HeapBytes.format(nioHeap)};
    }

    private static String label(int size) {
        return size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB";
    }

    // ------------------------------------------------------------------ emu

    /**
     * The round trips of one ping-pong measurement: each is timed on its own (after a warm-up of a
     * third of the time, at most 0.5 s), and the result is their median and mean, so that a
     * descheduled thread or a collection moves the mean but not the typical round trip (as perftest
     * reports t_typical).
     */
    static final class RoundTrips {
        private final long[] samples = new long[1 << 21];
        private final long warmEnd;
        private final long nanos;
        private long start;
        private long allocated;
        private int count;
        private boolean measuring;
        private boolean done;

        RoundTrips(long nanos) {
            this.nanos = nanos;
            this.warmEnd = System.nanoTime() + Math.min(nanos / 3, 500_000_000L);
        }

        /** Records the round trip that began at {@code t0}; returns the time it ended. */
        long add(long t0) {
            long now = System.nanoTime();
            if (measuring) {
                samples[count++] = now - t0;
                done = now - start >= nanos || count == samples.length;
                if (done) {
                    HeapBytes.record(allocated, count);
                }
            } else if (now >= warmEnd) {
                measuring = true;
                start = now;
                allocated = HeapBytes.now();
            }
            return now;
        }

        boolean done() {
            return done;
        }

        /** Median and mean in microseconds. */
        Result result() {
            long[] v = java.util.Arrays.copyOf(samples, count);
            java.util.Arrays.sort(v);
            double sum = 0;
            for (long x : v) {
                sum += x;
            }
            return new Result(v[count / 2] / 1e3, sum / count / 1e3);
        }
    }

    /** A ping-pong result: the median and the mean round trip in microseconds. */
    record Result(double median, double mean) {
    }

    /** Round-trip times in microseconds of a {@code size}-byte send answered by a send, both ends waiting. */
    static Result emuPingPong(int size, long nanos) throws Exception {
        return EmuPingPong.run("tcp 127.0.0.1:0", size, false, true, nanos);
    }

    /** MiB/s of pipelined RDMA Writes of {@code size} bytes. */
    static double emuWriteBandwidth(int size, long nanos) {
        EmuProvider p = new EmuProvider();
        BenchSide a = BenchSide.open(p, "bench-a", "tcp 127.0.0.1:0");
        BenchSide b = BenchSide.open(p, "bench-b", "tcp 127.0.0.1:0");
        try (Arena arena = Arena.ofShared()) {
            Endpoint[] eps = BenchSide.connect(a, b);
            int window = Math.max(4, Math.min(256, (16 << 20) / size));
            LocalMemoryRegion src = a.lmr(arena.allocate(size, 4096));
            LocalMemoryRegion dst = b.lmr(arena.allocate((long) size, 4096));
            List<LmrTriplet> iov = List.of(new LmrTriplet(src, 0, size));
            RmrTriplet remote = new RmrTriplet(dst.rmrContext(), dst.query().registeredAddress(), size);
            for (int i = 0; i < window; i++) {
                eps[0].postRdmaWrite(iov, i, remote, Dat.COMPLETION_DEFAULT);
            }
            EventSlot slot = new EventSlot();
            long warmEnd = System.nanoTime() + Math.min(nanos / 3, 500_000_000L);
            long start = 0;
            long done = 0;
            long allocated = 0;
            boolean measuring = false;
            while (true) {
                a.req().waitEvent(WAIT, 1, slot);
                BenchSide.success(slot);
                long now = System.nanoTime();
                if (!measuring && now >= warmEnd) {
                    measuring = true;
                    start = now;
                    done = 0;
                    allocated = HeapBytes.now();
                } else if (measuring) {
                    done++;
                    if (now - start >= nanos) {
                        HeapBytes.record(allocated, done);
                        for (int i = 0; i < window - 1; i++) {
                            BenchSide.success(a.req().waitEvent(WAIT));
                        }
                        return (double) done * size / (1 << 20) / ((now - start) / 1e9);
                    }
                }
                eps[0].postRdmaWrite(iov, 0, remote, Dat.COMPLETION_DEFAULT);
            }
        } finally {
            a.ia().close();
            b.ia().close();
        }
    }

    // ------------------------------------------------------------------ plain NIO

    private static SocketChannel[] nioPair() throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            for (SocketChannel c : new SocketChannel[] {client, accepted}) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            return new SocketChannel[] {client, accepted};
        }
    }

    private static void readFully(SocketChannel c, ByteBuffer b) throws IOException {
        b.clear();
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new IOException("closed");
            }
        }
    }

    private static void writeFully(SocketChannel c, ByteBuffer b) throws IOException {
        b.clear();
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    /** Round-trip times in microseconds of {@code size} bytes echoed over blocking channels. */
    static Result nioPingPong(int size, long nanos) throws Exception {
        SocketChannel[] ch = nioPair();
        try {
            int cpu = CpuPinning.currentCpu();
            Thread server = Thread.ofPlatform().name("bench-nio-echo").start(() -> {
                CpuPinning.pin(cpu);
                ByteBuffer buf = ByteBuffer.allocateDirect(size);
                try {
                    while (true) {
                        readFully(ch[1], buf);
                        writeFully(ch[1], buf);
                    }
                } catch (IOException e) {
                    // the client closed: done
                }
            });
            ByteBuffer buf = ByteBuffer.allocateDirect(size);
            RoundTrips rtt = new RoundTrips(nanos);
            Runnable unpin = CpuPinning.pin(cpu);
            try {
                long t0 = System.nanoTime();
                do {
                    writeFully(ch[0], buf);
                    readFully(ch[0], buf);
                    t0 = rtt.add(t0);
                } while (!rtt.done());
            } finally {
                unpin.run();
            }
            ch[0].close();
            server.join();
            return rtt.result();
        } finally {
            ch[0].close();
            ch[1].close();
        }
    }

    /** MiB/s of a stream of {@code size}-byte messages over blocking channels. */
    static double nioBandwidth(int size, long nanos) throws Exception {
        SocketChannel[] ch = nioPair();
        try {
            CompletableFuture<Long> received = new CompletableFuture<>();
            Thread reader = Thread.ofPlatform().name("bench-nio-reader").start(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(size);
                long total = 0;
                try {
                    while (true) {
                        buf.clear();
                        int n = ch[1].read(buf);
                        if (n < 0) {
                            break;
                        }
                        total += n;
                    }
                    received.complete(total);
                } catch (IOException e) {
                    received.completeExceptionally(e);
                }
            });
            ByteBuffer buf = ByteBuffer.allocateDirect(size);
            long warmEnd = System.nanoTime() + Math.min(nanos / 3, 500_000_000L);
            while (System.nanoTime() < warmEnd) {
                writeFully(ch[0], buf);
            }
            long start = System.nanoTime();
            long allocated = HeapBytes.now();
            long sent = 0;
            while (System.nanoTime() - start < nanos) {
                writeFully(ch[0], buf);
                sent += size;
            }
            ch[0].shutdownOutput();
            received.get(30, TimeUnit.SECONDS);
            long elapsed = System.nanoTime() - start;
            HeapBytes.record(allocated, sent / size);
            reader.join();
            return sent / (double) (1 << 20) / (elapsed / 1e9);
        } finally {
            ch[0].close();
            ch[1].close();
        }
    }
}
