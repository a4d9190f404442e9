package org.jdapl.provider.ofi.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalIov;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;

/**
 * The benchmark rows of the ofi provider, each against libfabric's own tool in the same run, with the
 * ratio: a 64-byte send/receive ping-pong through the DAT API on two IAs of libfabric's tcp provider
 * over lo (the ponger on a thread of its own, both polling their EVDs with dat_evd_dequeue into a
 * reusable event slot, after a warm-up of up to 20 000 round trips for the JIT) against {@code fi_pingpong -p tcp -e msg -d lo -S 64} (server and client
 * processes), half round trip; and 1 MiB RDMA Writes (a window of {@value #WINDOW} outstanding, each
 * delivery complete) against {@code fi_pingpong ... -S 1048576}, MB/s (10^6 bytes per second, as
 * fi_pingpong counts). Debian's libfabric-bin ships fi_pingpong only, not fabtests' fi_rma_bw, so the
 * 1 MiB baseline is fi_pingpong's send/receive throughput at that size. A program, not a test:
 * {@code scripts/ofi/bench.sh}.
 */
public final class OfiPingPongBench {
    private static final int SIZE = 64;
    private static final int BIG = 1 << 20;
    private static final int WINDOW = 4;

    private OfiPingPongBench() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        int bigIterations = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        double fi = fiPingPong(SIZE, iterations)[1];
        double dat = datPingPong(iterations);
        double fiBig = fiPingPong(BIG, bigIterations)[0];
        double datBig = datWriteBandwidth(bigIterations);
        System.out.printf(Locale.ROOT, "%-40s %12s %12s %8s%n", "tcp on lo", "DAT", "fi_pingpong", "ratio");
        System.out.printf(Locale.ROOT, "%-40s %12.2f %12.2f %8.2f%n", "64 B send/recv half round trip (us)", dat, fi,
                dat / fi);
        System.out.printf(Locale.ROOT, "%-40s %12.2f %12.2f %8.2f%n", "1 MiB RDMA Write bandwidth (MB/s)", datBig,
                fiBig, datBig / fiBig);
    }

    /** fi_pingpong's MB/sec and usec/xfer for {@code size} bytes, server and client as two processes. */
    static double[] fiPingPong(int size, int iterations) throws Exception {
        List<String> common = List.of("fi_pingpong", "-p", "tcp", "-e", "msg", "-d", "lo", "-S", Integer.toString(size),
                "-I", Integer.toString(iterations), "-B", "47123");
        Path sout = Files.createTempFile("fi_pingpong", ".server");
        Process server = new ProcessBuilder(common).redirectErrorStream(true).redirectOutput(sout.toFile()).start();
        try {
            Thread.sleep(500);
            List<String> client = new ArrayList<>(common.subList(0, common.size() - 2));
            client.addAll(List.of("-P", "47123", "127.0.0.1"));
            Process c = new ProcessBuilder(client).redirectErrorStream(true).start();
            String out = new String(c.getInputStream().readAllBytes());
            if (!c.waitFor(300, TimeUnit.SECONDS) || c.exitValue() != 0) {
                throw new IllegalStateException("fi_pingpong client failed:\n" + out);
            }
            for (String line : out.split("\n")) {
                String[] f = line.trim().split("\\s+");
                String label = size >= 1 << 20 ? (size >> 20) + "m" : size >= 1 << 10 ? (size >> 10) + "k"
                        : Integer.toString(size);
                if (f.length >= 8 && f[0].equals(label)) {
                    return new double[] {Double.parseDouble(f[5]), Double.parseDouble(f[6])};
                }
            }
            throw new IllegalStateException("no result line in fi_pingpong's output:\n" + out);
        } finally {
            server.waitFor(10, TimeUnit.SECONDS);
            server.destroyForcibly();
            Files.deleteIfExists(sout);
        }
    }

    /** The DAT ping-pong's half round trip in microseconds. */
    static double datPingPong(int iterations) throws Exception {
        OfiProvider provider = new OfiProvider();
        try (InterfaceAdapter a = provider.open(new IaSpec("ofi-bench-a", "tcp lo", "", true, "bench"), 16);
             InterfaceAdapter b = provider.open(new IaSpec("ofi-bench-b", "tcp lo", "", true, "bench"), 16);
             Arena arena = Arena.ofShared()) {
            Side sa = new Side(a, arena, SIZE);
            Side sb = new Side(b, arena, SIZE);
            sb.ep.postRecv(sb.recvIov, 0, Dat.COMPLETION_DEFAULT);
            sa.ep.postRecv(sa.recvIov, 0, Dat.COMPLETION_DEFAULT);
            connect(sa, sb, a, b);
            int warm = Math.min(20_000, iterations);
            Thread ponger = Thread.ofPlatform().name("pong").start(() -> pong(sb, warm + iterations));
            ping(sa, warm);
            long t0 = System.nanoTime();
            ping(sa, iterations);
            long t1 = System.nanoTime();
            ponger.join(60_000);
            return (t1 - t0) / 1000.0 / iterations / 2;
        }
    }

    private static void expect(DatEvent e, EventNumber n) {
        if (e.number() != n) {
            throw new IllegalStateException("expected " + n + ", got " + e);
        }
    }

    /** Takes the next completion of {@code s}'s EVD into its slot (polling); fails on an error. */
    private static void poll(Side s, EventDispatcher evd) {
        while (!evd.dequeue(s.slot)) {
            Thread.onSpinWait();
        }
        if (s.slot.status() != DtoStatus.SUCCESS) {
            throw new IllegalStateException("DTO failed: " + s.slot);
        }
    }

    /**
     * 1 MiB RDMA Writes from one IA's region to the other's, {@value #WINDOW} outstanding, after a
     * warm-up: MB/s (10^6 bytes per second).
     */
    static double datWriteBandwidth(int iterations) throws Exception {
        OfiProvider provider = new OfiProvider();
        try (InterfaceAdapter a = provider.open(new IaSpec("ofi-bench-c", "tcp lo", "", true, "bench"), 16);
             InterfaceAdapter b = provider.open(new IaSpec("ofi-bench-d", "tcp lo", "", true, "bench"), 16);
             Arena arena = Arena.ofShared()) {
            Side sa = new Side(a, arena, BIG);
            Side sb = new Side(b, arena, BIG);
            connect(sa, sb, a, b);
            RmrTriplet target = new RmrTriplet(sb.lmr.rmrContext(), sb.lmr.query().registeredAddress() + BIG, BIG);
            int warm = Math.min(20, iterations);
            write(sa, target, warm);
            long t0 = System.nanoTime();
            write(sa, target, iterations);
            long t1 = System.nanoTime();
            return (double) iterations * BIG / ((t1 - t0) / 1e9) / 1e6;
        }
    }

    private static void write(Side s, RmrTriplet target, int n) {
        int posted = 0;
        int done = 0;
        while (done < n) {
            while (posted < n && posted - done < WINDOW) {
                s.ep.postRdmaWrite(s.sendIov, posted++, target, Dat.COMPLETION_DEFAULT);
            }
            poll(s, s.reqEvd);
            done++;
        }
    }

    private static void connect(Side sa, Side sb, InterfaceAdapter a, InterfaceAdapter b) {
        EventDispatcher cr = b.createEvd(4, null, java.util.EnumSet.of(EvdFlag.CR));
        PublicServicePoint psp = b.createPspAny(cr, PspFlag.CONSUMER);
        sa.ep.connect(a.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0]);
        DatEvent.ConnectionRequest req = (DatEvent.ConnectionRequest) cr.waitEvent(5_000_000);
        req.request().accept(sb.ep, new byte[0]);
        expect(sb.conn.waitEvent(5_000_000), EventNumber.CONNECTION_ESTABLISHED);
        expect(sa.conn.waitEvent(5_000_000), EventNumber.CONNECTION_ESTABLISHED);
    }

    private static void ping(Side s, int n) {
        for (int i = 0; i < n; i++) {
            s.ep.postSend(s.sendIov, i, Dat.COMPLETION_DEFAULT);
            poll(s, s.recvEvd);
            s.ep.postRecv(s.recvIov, i, Dat.COMPLETION_DEFAULT);
            poll(s, s.reqEvd);
        }
    }

    private static void pong(Side s, int n) {
        for (int i = 0; i < n; i++) {
            poll(s, s.recvEvd);
            s.ep.postRecv(s.recvIov, i, Dat.COMPLETION_DEFAULT);
            s.ep.postSend(s.sendIov, i, Dat.COMPLETION_DEFAULT);
            poll(s, s.reqEvd);
        }
    }

    /** One side's objects. */
    private static final class Side {
        final EventDispatcher recvEvd;
        final EventDispatcher reqEvd;
        final EventDispatcher conn;
        final Endpoint ep;
        final LocalMemoryRegion lmr;
        final LocalIov sendIov;
        final LocalIov recvIov;
        final EventSlot slot = new EventSlot();

        /** Two regions of {@code size} bytes in one LMR: the first sends, the second receives. */
        Side(InterfaceAdapter ia, Arena arena, int size) {
            ProtectionZone pz = ia.createPz();
            recvEvd = ia.createEvd(64, null, java.util.EnumSet.of(EvdFlag.DTO));
            reqEvd = ia.createEvd(64, null, java.util.EnumSet.of(EvdFlag.DTO));
            conn = ia.createEvd(8, null, java.util.EnumSet.of(EvdFlag.CONNECTION));
            ep = ia.createEp(pz, recvEvd, reqEvd, conn, EpAttributes.defaults().withQueueDepths(8, 8));
            MemorySegment m = arena.allocate(2L * size, 4096);
            lmr = ia.createLmr(pz, m, Dat.MEM_PRIV_ALL, VaType.VA);
            sendIov = LocalIov.of(new LmrTriplet(lmr, 0, size));
            recvIov = LocalIov.of(new LmrTriplet(lmr, size, size));
        }
    }
}
