package org.jdapl.provider.ofa.rxe;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * The OFA provider on Soft-RoCE under faults, in the guest: (1) a peer JVM killed (SIGKILL) while
 * sends stream to it: the survivor sees the connection end (BROKEN or DISCONNECTED) and every
 * outstanding cookie complete exactly once, and its JVM carries on; (2) both IAs of a connection closed
 * with sends, RDMA Writes and receives in flight, then a new pair works; (3) IA open/close cycles with
 * a QP, CQs, an MR and a listener each: file descriptors, threads, pinned memory and the kernel's RDMA
 * resources back to the baseline. {@code java ... OfaRxeSoak <report> [cycles]}; exit status 1 if a
 * check failed. {@code --serve} is the peer's side.
 */
public final class OfaRxeSoak {
    private static final String DEVICE = System.getenv().getOrDefault("JDAPL_RXE_DEVICE", "rxe0");
    private static final long QUAL = 0x5AA5;
    private static final long WAIT = TimeUnit.SECONDS.toMicros(60);
    private static final OfaProvider PROVIDER = new OfaProvider();
    private static int opened;

    private final List<String> report = new ArrayList<>();
    private boolean failed;

    private OfaRxeSoak() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--serve")) {
            serve();
            return;
        }
        OfaRxeSoak soak = new OfaRxeSoak();
        int cycles = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        for (Runnable part : List.<Runnable>of(soak::peerKilledMidStream, soak::iaCloseWithDtosInFlight,
                () -> soak.openCloseCycles(cycles))) {
            try {
                part.run();
            } catch (RuntimeException | AssertionError e) {
                soak.check(false, "part failed: " + e);
                e.printStackTrace(System.out);
            }
        }
        soak.line(soak.failed ? "ofa-rxe soak: FAILED" : "ofa-rxe soak: PASSED");
        Files.write(Path.of(args[0]), soak.report);
        System.exit(soak.failed ? 1 : 0);
    }

    private void line(String text) {
        report.add(text);
        System.out.println(text);
        System.out.flush();
    }

    private void check(boolean ok, String what) {
        if (!ok) {
            failed = true;
            line("FAIL " + what);
        }
    }

    private static InterfaceAdapter open() {
        return PROVIDER.open(new IaSpec("ofa-v2-" + DEVICE + "-1-soak" + ++opened, DEVICE + " 1", "", true, "soak"), 64);
    }

    // ------------------------------------------------------------------ 1. a peer JVM killed mid-stream

    /** The peer: accepts connections on {@link #QUAL} and keeps receives posted until it is killed. */
    private static void serve() throws IOException {
        InterfaceAdapter ia = open();
        ProtectionZone pz = ia.createPz();
        EventDispatcher dto = ia.createEvd(1024, null, EnumSet.of(EvdFlag.DTO));
        EventDispatcher conn = ia.createEvd(16, null, EnumSet.of(EvdFlag.CONNECTION));
        EventDispatcher cr = ia.createEvd(16, null, EnumSet.of(EvdFlag.CR));
        ia.createPsp(QUAL, cr, PspFlag.CONSUMER);
        LocalMemoryRegion lmr = ia.createLmr(pz, Arena.global().allocate(256 * 64, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
        InetSocketAddress address = (InetSocketAddress) ia.query().attributes().address();
        System.out.println("ready " + address.getAddress().getHostAddress());
        System.out.flush();
        DatEvent request = cr.waitEvent(TimeUnit.MINUTES.toMicros(5));
        Endpoint ep = ia.createEp(pz, dto, dto, conn, null);
        for (int i = 0; i < 256; i++) {
            ep.postRecv(List.of(new LmrTriplet(lmr, i * 64L, 64)), i, Dat.COMPLETION_DEFAULT);
        }
        ((DatEvent.ConnectionRequest) request).request().accept(ep, new byte[0]);
        while (true) {
            DatEvent e = dto.waitEvent(TimeUnit.MINUTES.toMicros(5));
            if (e instanceof DatEvent.DtoCompletion c && c.status() == DtoStatus.SUCCESS) {
                int i = (int) c.cookie();
                ep.postRecv(List.of(new LmrTriplet(lmr, i * 64L, 64)), i, Dat.COMPLETION_DEFAULT);
            }
        }
    }

    private void peerKilledMidStream() {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                OfaRxeSoak.class.getName(), "--serve");
        Process peer;
        String ip;
        try {
            peer = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader in = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
            String ready = in.readLine();
            if (ready == null || !ready.startsWith("ready ")) {
                peer.destroyForcibly();
                check(false, "kill: the peer JVM did not start serving: " + ready);
                return;
            }
            ip = ready.substring(6).strip();
        } catch (IOException e) {
            check(false, "kill: cannot start the peer JVM: " + e);
            return;
        }
        try (InterfaceAdapter ia = open(); Arena arena = Arena.ofShared()) {
            ProtectionZone pz = ia.createPz();
            EventDispatcher dto = ia.createEvd(1024, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher conn = ia.createEvd(16, null, EnumSet.of(EvdFlag.CONNECTION));
            LocalMemoryRegion lmr = ia.createLmr(pz, arena.allocate(64 * 64, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            Endpoint ep = ia.createEp(pz, dto, dto, conn, null);
            // Receives the peer never answers: they are outstanding when the peer dies and must be flushed.
            int receives = 32;
            for (int i = 0; i < receives; i++) {
                ep.postRecv(List.of(new LmrTriplet(lmr, 32 * 64 + (i % 32) * 64L, 64)), -1 - i, Dat.COMPLETION_DEFAULT);
            }
            ep.connect(new InetSocketAddress(ip, 0), QUAL, WAIT, new byte[0]);
            DatEvent established = conn.waitEvent(WAIT);
            check(established.number() == EventNumber.CONNECTION_ESTABLISHED, "kill: connected: " + established);
            Set<Long> outstanding = new HashSet<>();
            for (int i = 0; i < receives; i++) {
                outstanding.add(-1L - i);
            }
            int flushedReceives = 0;
            Map<DtoStatus, Integer> outcomes = new TreeMap<>();
            long posted = 0;
            long twice = 0;
            long killedAt = 0;
            EventNumber end = null;
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (System.nanoTime() < deadline && (end == null || !outstanding.isEmpty())) {
                while (end == null && outstanding.size() < 16 + receives) {
                    long cookie = ++posted;
                    try {
                        ep.postSend(List.of(new LmrTriplet(lmr, (cookie % 64) * 64, 64)), cookie, Dat.COMPLETION_DEFAULT);
                        outstanding.add(cookie);
                    } catch (DatException e) {
                        posted--;
                        break; // the EP no longer takes sends
                    }
                }
                int ok = outcomes.getOrDefault(DtoStatus.SUCCESS, 0);  // sends only: the receives never succeed
                if (killedAt == 0 && ok >= 300) {
                    peer.destroyForcibly(); // SIGKILL, sends in flight
                    killedAt = System.nanoTime();
                }
                DatEvent e;
                try {
                    e = (end == null && outstanding.isEmpty() ? conn : dto).waitEvent(100_000);
                } catch (DatException x) {
                    if (x.type() != DatReturnType.TIMEOUT_EXPIRED) {
                        throw x;
                    }
                    DatEvent c = conn.dequeue().orElse(null);
                    if (c != null && end == null) {
                        end = c.number();
                    }
                    continue;
                }
                if (e instanceof DatEvent.DtoCompletion c) {
                    if (!outstanding.remove(c.cookie())) {
                        twice++;
                    }
                    outcomes.merge(c.status(), 1, Integer::sum);
                    if (c.cookie() < 0 && c.status() == DtoStatus.FLUSHED) {
                        flushedReceives++;
                    }
                } else if (e instanceof DatEvent.Connection c) {
                    end = c.number();
                }
                if (end == null) {
                    DatEvent c = conn.dequeue().orElse(null);
                    if (c != null) {
                        end = c.number();
                    }
                }
            }
            double ms = killedAt == 0 ? -1 : (System.nanoTime() - killedAt) / 1e6;
            line(String.format(Locale.ROOT, "kill: peer JVM SIGKILLed after %d sends; survivor saw %s %.0f ms later; "
                            + "posted %d sends and %d receives, completions %s (%d receives FLUSHED), completed twice %d, "
                            + "never completed %d", 300, end == null ? "no connection event" : end.datName(), ms, posted,
                    receives, outcomes, flushedReceives, twice, outstanding.size()));
            check(killedAt != 0, "kill: the stream never reached 300 sends");
            check(end == EventNumber.CONNECTION_BROKEN || end == EventNumber.CONNECTION_DISCONNECTED,
                    "kill: the survivor's connection ended BROKEN or DISCONNECTED (" + end + ")");
            check(twice == 0, "kill: no completion twice");
            check(outstanding.isEmpty(), "kill: every outstanding send completed");
            check(flushedReceives == receives, "kill: every receive outstanding at the break completed FLUSHED");
            ep.free();
        } finally {
            peer.destroyForcibly();
        }
    }

    // ------------------------------------------------------------------ 2. IA close with DTOs in flight

    private void iaCloseWithDtosInFlight() {
        for (int round = 0; round < 2; round++) {
            try (Arena arena = Arena.ofShared()) {
                InterfaceAdapter a = open();
                InterfaceAdapter b = open();
                Pair p = Pair.connect(a, b, arena);
                for (int i = 0; i < 64; i++) {
                    p.epB.postRecv(List.of(new LmrTriplet(p.lmrB, i * 64L, 64)), i, Dat.COMPLETION_DEFAULT);
                }
                RmrTriplet remote = new RmrTriplet(p.lmrB.query().rmrContext(), p.lmrB.query().registeredAddress()
                        + 8192, 4096);
                for (int i = 0; i < 32; i++) {
                    p.epA.postSend(List.of(new LmrTriplet(p.lmrA, i * 64L, 64)), i, Dat.COMPLETION_DEFAULT);
                    p.epA.postRdmaWrite(List.of(new LmrTriplet(p.lmrA, 8192, 4096)), 100 + i, remote,
                            Dat.COMPLETION_DEFAULT);
                }
                // Round 0 closes the active side first, round 1 the passive side, both with everything in flight.
                InterfaceAdapter first = round == 0 ? a : b;
                InterfaceAdapter second = round == 0 ? b : a;
                first.close();
                second.close();
                check(a.isFreed() && b.isFreed(), "ia close: both IAs closed with DTOs in flight (round " + round + ")");
            }
        }
        try (Arena arena = Arena.ofShared(); InterfaceAdapter a = open(); InterfaceAdapter b = open()) {
            Pair p = Pair.connect(a, b, arena);
            p.epB.postRecv(List.of(new LmrTriplet(p.lmrB, 0, 64)), 1, Dat.COMPLETION_DEFAULT);
            p.epA.postSend(List.of(new LmrTriplet(p.lmrA, 0, 64)), 2, Dat.COMPLETION_DEFAULT);
            DatEvent r = p.dtoB.waitEvent(WAIT);
            boolean ok = r instanceof DatEvent.DtoCompletion c && c.status() == DtoStatus.SUCCESS;
            line("ia close: two rounds of IA close with 64 receives, 32 sends and 32 RDMA Writes in flight; "
                    + "a new pair then " + (ok ? "sends and receives" : "FAILS: " + r));
            check(ok, "ia close: a new pair works after the closes");
        }
    }

    /** Two connected EPs, A active, B passive, with an LMR each. */
    private record Pair(Endpoint epA, Endpoint epB, LocalMemoryRegion lmrA, LocalMemoryRegion lmrB,
                        EventDispatcher dtoA, EventDispatcher dtoB) {
        static Pair connect(InterfaceAdapter a, InterfaceAdapter b, Arena arena) {
            ProtectionZone pzA = a.createPz();
            ProtectionZone pzB = b.createPz();
            EventDispatcher dtoA = a.createEvd(256, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher dtoB = b.createEvd(256, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher connA = a.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher connB = b.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher cr = b.createEvd(8, null, EnumSet.of(EvdFlag.CR));
            LocalMemoryRegion lmrA = a.createLmr(pzA, arena.allocate(16384, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            LocalMemoryRegion lmrB = b.createLmr(pzB, arena.allocate(16384, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            Endpoint epA = a.createEp(pzA, dtoA, dtoA, connA, null);
            Endpoint epB = b.createEp(pzB, dtoB, dtoB, connB, null);
            long qual = b.createPspAny(cr, PspFlag.CONSUMER).query().connQual();
            epA.connect(b.query().attributes().address(), qual, WAIT, new byte[0]);
            ((DatEvent.ConnectionRequest) cr.waitEvent(WAIT)).request().accept(epB, new byte[0]);
            if (connA.waitEvent(WAIT).number() != EventNumber.CONNECTION_ESTABLISHED
                    || connB.waitEvent(WAIT).number() != EventNumber.CONNECTION_ESTABLISHED) {
                throw new AssertionError("the pair did not connect");
            }
            return new Pair(epA, epB, lmrA, lmrB, dtoA, dtoB);
        }
    }

    // ------------------------------------------------------------------ 3. open/close cycles

    private void openCloseCycles(int cycles) {
        for (int i = 0; i < 20; i++) {
            cycle();
        }
        settle();
        long fds0 = count("/proc/self/fd");
        int threads0 = Thread.activeCount();
        long pinned0 = statusKb("VmPin");
        long locked0 = statusKb("VmLck");
        String rdma0 = rdmaResources();
        long t0 = System.nanoTime();
        for (int i = 0; i < cycles; i++) {
            cycle();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        settle();
        long fds = count("/proc/self/fd");
        int threads = Thread.activeCount();
        long pinned = statusKb("VmPin");
        long locked = statusKb("VmLck");
        String rdma = rdmaResources();
        line(String.format(Locale.ROOT, "cycles: %d IA open/close cycles (PD, 2 CQs, QP, MR, listener) in %.1f s: "
                        + "fds %d -> %d, threads %d -> %d, pinned %d -> %d kB, locked %d -> %d kB, kernel RDMA "
                        + "resources %s", cycles, seconds, fds0, fds, threads0, threads, pinned0, pinned, locked0,
                locked, rdma0.equals(rdma) ? "unchanged" : "CHANGED: " + rdma0 + " -> " + rdma));
        check(fds <= fds0, "cycles: file descriptors back to the baseline");
        check(threads <= threads0, "cycles: threads back to the baseline");
        check(pinned <= pinned0 && locked <= locked0, "cycles: pinned and locked memory back to the baseline");
        check(rdma0.equals(rdma), "cycles: the kernel's RDMA resources back to the baseline");
        check(PROVIDER.openObjects().isEmpty() || PROVIDER.openObjects().values().stream().allMatch(n -> n == 0),
                "cycles: the provider holds no object: " + PROVIDER.openObjects());
    }

    private static void cycle() {
        try (InterfaceAdapter ia = open(); Arena arena = Arena.ofConfined()) {
            ProtectionZone pz = ia.createPz();
            EventDispatcher dto = ia.createEvd(32, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher cr = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR, EvdFlag.CONNECTION));
            ia.createLmr(pz, arena.allocate(16384, 4096), Dat.MEM_PRIV_ALL, VaType.VA);
            ia.createEp(pz, dto, dto, cr, null);
            ia.createPspAny(cr, PspFlag.CONSUMER);
        }
    }

    private static void settle() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static long count(String dir) {
        try (Stream<Path> s = Files.list(Path.of(dir))) {
            return s.count();
        } catch (IOException e) {
            return -1;
        }
    }

    /** A field of /proc/self/status in kB (VmPin: pages pinned for DMA; VmLck: locked pages). */
    private static long statusKb(String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith(field + ":")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            // not available
        }
        return -1;
    }

    private static String rdmaResources() {
        try {
            Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor(30, TimeUnit.SECONDS);
            return out;
        } catch (IOException e) {
            return "rdma resource show failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
