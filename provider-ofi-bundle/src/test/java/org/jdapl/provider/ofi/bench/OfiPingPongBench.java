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
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;

/**
 * The benchmark row of the ofi provider: a 64-byte send/receive ping-pong through the DAT API on
 * two IAs of libfabric's tcp provider over lo (the ponger on a thread of its own, both polling
 * their EVDs with dat_evd_dequeue), and {@code fi_pingpong -p tcp -e msg -d lo -S 64} (fabtests:
 * server and client processes) in the same run; it prints both half round trips and their ratio.
 * A program, not a test: {@code scripts/ofi/bench.sh}.
 */
public final class OfiPingPongBench {
    private static final int SIZE = 64;

    private OfiPingPongBench() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        double fi = fiPingPong(iterations);
        double dat = datPingPong(iterations);
        System.out.printf(Locale.ROOT, "%-32s %12s %12s %8s%n", "64 B send/recv, tcp on lo", "DAT (us)", "fi_pingpong",
                "ratio");
        System.out.printf(Locale.ROOT, "%-32s %12.2f %12.2f %8.2f%n", "half round trip", dat, fi, dat / fi);
    }

    /** fi_pingpong's usec/xfer for 64 bytes, server and client as two processes. */
    static double fiPingPong(int iterations) throws Exception {
        List<String> common = List.of("fi_pingpong", "-p", "tcp", "-e", "msg", "-d", "lo", "-S", Integer.toString(SIZE),
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
                if (f.length >= 8 && f[0].equals(Integer.toString(SIZE))) {
                    return Double.parseDouble(f[6]);
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
            Side sa = new Side(a, arena);
            Side sb = new Side(b, arena);
            EventDispatcher cr = b.createEvd(4, null, java.util.EnumSet.of(EvdFlag.CR));
            PublicServicePoint psp = b.createPspAny(cr, PspFlag.CONSUMER);
            long q = psp.query().connQual();
            sb.ep.postRecv(List.of(sb.recv), 0, Dat.COMPLETION_DEFAULT);
            sa.ep.postRecv(List.of(sa.recv), 0, Dat.COMPLETION_DEFAULT);
            sa.ep.connect(a.query().attributes().address(), q, 5_000_000, new byte[0]);
            DatEvent.ConnectionRequest req = (DatEvent.ConnectionRequest) cr.waitEvent(5_000_000);
            req.request().accept(sb.ep, new byte[0]);
            expect(sb.conn.waitEvent(5_000_000), EventNumber.CONNECTION_ESTABLISHED);
            expect(sa.conn.waitEvent(5_000_000), EventNumber.CONNECTION_ESTABLISHED);
            int warm = Math.min(2000, iterations);
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

    private static DatEvent.DtoCompletion poll(EventDispatcher evd) {
        while (true) {
            var e = evd.dequeue();
            if (e.isPresent()) {
                DatEvent.DtoCompletion c = (DatEvent.DtoCompletion) e.get();
                if (c.status() != DtoStatus.SUCCESS) {
                    throw new IllegalStateException("DTO failed: " + c);
                }
                return c;
            }
        }
    }

    private static void ping(Side s, int n) {
        for (int i = 0; i < n; i++) {
            s.ep.postSend(List.of(s.send), i, Dat.COMPLETION_DEFAULT);
            poll(s.recvEvd);
            s.ep.postRecv(List.of(s.recv), i, Dat.COMPLETION_DEFAULT);
            poll(s.reqEvd);
        }
    }

    private static void pong(Side s, int n) {
        for (int i = 0; i < n; i++) {
            poll(s.recvEvd);
            s.ep.postRecv(List.of(s.recv), i, Dat.COMPLETION_DEFAULT);
            s.ep.postSend(List.of(s.send), i, Dat.COMPLETION_DEFAULT);
            poll(s.reqEvd);
        }
    }

    /** One side's objects. */
    private static final class Side {
        final EventDispatcher recvEvd;
        final EventDispatcher reqEvd;
        final EventDispatcher conn;
        final Endpoint ep;
        final LmrTriplet send;
        final LmrTriplet recv;

        Side(InterfaceAdapter ia, Arena arena) {
            ProtectionZone pz = ia.createPz();
            recvEvd = ia.createEvd(64, null, java.util.EnumSet.of(EvdFlag.DTO));
            reqEvd = ia.createEvd(64, null, java.util.EnumSet.of(EvdFlag.DTO));
            conn = ia.createEvd(8, null, java.util.EnumSet.of(EvdFlag.CONNECTION));
            ep = ia.createEp(pz, recvEvd, reqEvd, conn, EpAttributes.defaults().withQueueDepths(8, 8));
            MemorySegment m = arena.allocate(2 * SIZE, 64);
            LocalMemoryRegion lmr = ia.createLmr(pz, m, Dat.MEM_PRIV_ALL, VaType.VA);
            send = new LmrTriplet(lmr, 0, SIZE);
            recv = new LmrTriplet(lmr, SIZE, SIZE);
        }
    }
}
