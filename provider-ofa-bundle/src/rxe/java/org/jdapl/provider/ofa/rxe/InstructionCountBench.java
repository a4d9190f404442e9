package org.jdapl.provider.ofa.rxe;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.jdapl.bench.CpuPinning;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.OfaProvider;
import org.jdapl.provider.ofa.RawVerbsPingPong;

/**
 * The guest instructions that a round trip of the send/recv ping-pong costs in user mode under an
 * emulated CPU, through the DAT API and through bare verbs ({@link RawVerbsPingPong}) on the same queue
 * pairs in the same JVM, counted by {@code scripts/rxe/insn-count-plugin.c}. Instruction counts do not
 * move with the emulating machine's phases as times do: within one JVM, block after block gives the
 * same figure to within a few instructions, so a change to the data path can be weighed exactly.
 *
 * <p>The ping-pong runs on one thread, both EPs in turn (rxe delivers a send within the
 * {@code ibv_post_send} call, so every dequeue finds its completion): per round trip, two request
 * posts, two receive posts and two dequeues that return a receive, as in the two-thread ping-pong of
 * {@link DatBench}. The thread calls the marker ({@code insn_marker}) before and after each block; at
 * each marker the plugin appends what the vCPUs executed since the one before to its output file.
 *
 * <p>{@code java ... InstructionCountBench <device> <marker library> <plugin output> <iterations>
 * <blocks> <CPU>} prints per message size the median over the blocks of the DAT and the bare-verbs
 * figures and their ratio, and for the last 2 B block of DAT where its instructions went (by compiled
 * method, from the JIT's perf map, or by native library); then one step of the busy-polling loop, an
 * empty {@code dat_evd_dequeue} against an empty bare {@code ibv_poll_cq} of the same CQ, with where the
 * first one's instructions went.
 */
public final class InstructionCountBench {
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);
    private static final long WARMUP_MIN = TimeUnit.SECONDS.toNanos(15);
    private static final long JIT_QUIET = TimeUnit.SECONDS.toNanos(8);
    private static final long WARMUP_MAX = TimeUnit.SECONDS.toNanos(200);
    private static final int[] SIZES = {2, 64};
    private static final int TOP = 12;

    private InstructionCountBench() {
    }

    /** What the vCPU that marked executed between two markers. */
    record Segment(long user, long kernel, List<long[]> blocks) {
    }

    /**
     * Connects, warms up, counts and prints.
     *
     * @param args device, marker library, plugin output, iterations per block, blocks, CPU
     */
    public static void main(String[] args) throws Throwable {
        String device = args[0];
        MethodHandle marker = Linker.nativeLinker().downcallHandle(
                SymbolLookup.libraryLookup(Path.of(args[1]), Arena.global()).find("insn_marker").orElseThrow(),
                FunctionDescriptor.ofVoid());
        Path log = Path.of(args[2]);
        int iters = Integer.parseInt(args[3]);
        int blocks = Integer.parseInt(args[4]);
        int cpu = Integer.parseInt(args[5]);
        CpuPinning.bind(cpu);
        OfaProvider provider = new OfaProvider();
        DatBench.Side a = DatBench.Side.open(provider, device, "a");
        DatBench.Side b = DatBench.Side.open(provider, device, "b");
        try (Arena arena = Arena.ofShared(); RandomAccessFile in = new RandomAccessFile(log.toFile(), "r")) {
            DatBench.connect(a.ia(), a.ep(), a.evd(), b.ia(), b.ep(), b.evd());
            LocalMemoryRegion la = a.ia().createLmr(a.pz(), arena.allocate(1 << 20, 4096), Dat.MEM_PRIV_ALL,
                    VaType.VA);
            LocalMemoryRegion lb = b.ia().createLmr(b.pz(), arena.allocate(1 << 20, 4096), Dat.MEM_PRIV_ALL,
                    VaType.VA);
            warmUp(a, b, la, lb);
            long[][] dat = new long[SIZES.length][blocks];
            long[][] bare = new long[SIZES.length][blocks];
            long[][] kernel = new long[SIZES.length][blocks];
            long empty = 0;
            Segment last = null;
            // Each block runs between two markers; the file is read after the second, whose segment is the
            // block (the first one's, what ran before the block, is passed over).
            for (int k = 0; k < blocks; k++) {
                for (int s = 0; s < SIZES.length; s++) {
                    marker.invokeExact();
                    empty += datInTurn(a, b, la, lb, SIZES[s], iters);
                    marker.invokeExact();
                    Segment d = lastSegment(in, cpu);
                    dat[s][k] = d.user();
                    kernel[s][k] = d.kernel();
                    DatBench.quiesce(a, lb);
                    DatBench.quiesce(b, la);
                    marker.invokeExact();
                    empty += RawVerbsPingPong.inTurn(a.ep(), b.ep(), la, lb, SIZES[s], iters);
                    marker.invokeExact();
                    bare[s][k] = lastSegment(in, cpu).user();
                    if (s == 0) {
                        last = d;
                    }
                }
            }
            System.out.printf("user-mode guest instructions per round trip (vCPU %d; median of %d blocks of %d"
                    + " round trips; %d polls found nothing)%n", cpu, blocks, iters, empty);
            System.out.printf("%-6s %10s %11s %7s %24s %14s%n", "size", "DAT", "bare verbs", "ratio",
                    "DAT layer per message", "kernel mode");
            for (int s = 0; s < SIZES.length; s++) {
                double d = median(dat[s]) / iters;
                double r = median(bare[s]) / iters;
                System.out.printf("%-6s %10.0f %11.0f %7.2f %24.0f %14.0f%n", SIZES[s] + " B", d, r, d / r,
                        (d - r) / 2, median(kernel[s]) / iters);
                System.out.printf("  blocks: DAT %s, bare verbs %s%n", perTrip(dat[s], iters),
                        perTrip(bare[s], iters));
            }
            System.out.println("DAT 2 B, last block, per round trip by where the instructions ran:");
            printWhere(last, iters);
            marker.invokeExact();
            DatBench.emptyDequeue(a.evd(), iters);
            marker.invokeExact();
            Segment emptyDat = lastSegment(in, cpu);
            marker.invokeExact();
            RawVerbsPingPong.emptyPoll(a.ep(), iters);
            marker.invokeExact();
            Segment emptyBare = lastSegment(in, cpu);
            System.out.printf("an empty poll (the busy-polling loop's step): dat_evd_dequeue %d, ibv_poll_cq %d "
                    + "user-mode instructions; dat_evd_dequeue by where they ran:%n",
                    emptyDat.user() / iters, emptyBare.user() / iters);
            printWhere(emptyDat, iters);
        } finally {
            a.ia().close();
            b.ia().close();
        }
    }

    /** The DAT ping-pong of {@link RawVerbsPingPong#inTurn} through the DAT API. */
    private static long datInTurn(DatBench.Side a, DatBench.Side b, LocalMemoryRegion la, LocalMemoryRegion lb,
                                  int size, int iters) {
        List<LmrTriplet> sendA = List.of(new LmrTriplet(la, 0, size));
        List<LmrTriplet> recvA = List.of(new LmrTriplet(la, 4096, size));
        List<LmrTriplet> sendB = List.of(new LmrTriplet(lb, 0, size));
        List<LmrTriplet> recvB = List.of(new LmrTriplet(lb, 4096, size));
        a.ep().postRecv(recvA, 1, Dat.COMPLETION_DEFAULT);
        b.ep().postRecv(recvB, 1, Dat.COMPLETION_DEFAULT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long empty = 0;
        for (int i = 0; i < iters; i++) {
            boolean last = i + 1 == iters;
            a.ep().postSend(sendA, 2, SUPPRESS);
            empty += DatBench.awaitReceive(b.evd(), deadline);
            if (!last) {
                b.ep().postRecv(recvB, 1, Dat.COMPLETION_DEFAULT);
            }
            b.ep().postSend(sendB, 2, SUPPRESS);
            empty += DatBench.awaitReceive(a.evd(), deadline);
            if (!last) {
                a.ep().postRecv(recvA, 1, Dat.COMPLETION_DEFAULT);
            }
        }
        return empty;
    }

    /** Both ping-pongs until the JIT has finished with them ({@link DatBench#untilJitQuiet}). */
    private static void warmUp(DatBench.Side a, DatBench.Side b, LocalMemoryRegion la, LocalMemoryRegion lb)
            throws Exception {
        DatBench.untilJitQuiet(() -> {
            for (int size : SIZES) {
                datInTurn(a, b, la, lb, size, 300);
                DatBench.quiesce(a, lb);
                DatBench.quiesce(b, la);
                RawVerbsPingPong.inTurn(a.ep(), b.ep(), la, lb, size, 300);
            }
            DatBench.emptyDequeue(a.evd(), 300);
            RawVerbsPingPong.emptyPoll(a.ep(), 300);
        }, WARMUP_MIN, JIT_QUIET, WARMUP_MAX);
    }

    /**
     * The last segment the plugin appended since the file was last read: its {@code M} line and the
     * {@code B} lines after it ({@code address instructions runs}).
     */
    static Segment lastSegment(RandomAccessFile in, int cpu) throws IOException {
        long from = in.getFilePointer();
        byte[] added = new byte[(int) (in.length() - from)];
        in.readFully(added);
        String[] lines = new String(added, StandardCharsets.US_ASCII).split("\n");
        Segment s = null;
        for (String line : lines) {
            String[] f = line.split(" ");
            if (f[0].equals("M")) {
                int vcpu = Integer.parseInt(f[2]);
                if (vcpu != cpu) {
                    throw new IllegalStateException("the marker ran on vCPU " + vcpu + ", not " + cpu);
                }
                s = new Segment(Long.parseLong(f[4 + 2 * vcpu]), Long.parseLong(f[5 + 2 * vcpu]), new ArrayList<>());
            } else if (f[0].equals("B") && s != null) {
                s.blocks().add(new long[] {Long.parseUnsignedLong(f[1], 16), Long.parseLong(f[2]),
                        Long.parseLong(f[3])});
            }
        }
        if (s == null) {
            throw new IllegalStateException("the plugin wrote no marker line (is it loaded?)");
        }
        return s;
    }

    /** Prints the {@link #TOP} places of {@link #where} per iteration. */
    private static void printWhere(Segment s, int iters) throws Exception {
        for (Map.Entry<String, Long> e : where(s).entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(TOP).toList()) {
            System.out.printf("  %8.1f  %s%n", (double) e.getValue() / iters, e.getKey());
        }
    }

    /** A segment's instructions by compiled method (the JIT's perf map) or native library (/proc/self/maps). */
    private static Map<String, Long> where(Segment s) throws Exception {
        ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "compilerPerfmap", new Object[] {new String[0]}, new String[] {String[].class.getName()});
        TreeMap<Long, Object[]> code = new TreeMap<>();
        for (String line : Files.readAllLines(Path.of("/tmp/perf-" + ProcessHandle.current().pid() + ".map"))) {
            String[] f = line.split(" ", 3);
            if (f.length == 3) {
                long start = Long.parseUnsignedLong(f[0].replace("0x", ""), 16);
                code.put(start, new Object[] {start + Long.parseUnsignedLong(f[1].replace("0x", ""), 16), f[2]});
            }
        }
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 6 && f[1].contains("x")) {
                String[] range = f[0].split("-");
                long start = Long.parseUnsignedLong(range[0], 16);
                code.putIfAbsent(start, new Object[] {Long.parseUnsignedLong(range[1], 16),
                        Path.of(f[5]).getFileName().toString()});
            }
        }
        Map<String, Long> by = new HashMap<>();
        for (long[] block : s.blocks()) {
            Map.Entry<Long, Object[]> e = code.floorEntry(block[0]);
            String name = e != null && block[0] < (long) e.getValue()[0] ? shortName((String) e.getValue()[1]) : "";
            by.merge(name.isEmpty() ? "other" : name, block[1] * block[2], Long::sum);
        }
        return by;
    }

    /** {@code Class.method} of a perf map entry ({@code void org.example.Class.method(int)}), or the name as it is. */
    private static String shortName(String name) {
        int paren = name.indexOf('(');
        if (paren < 0) {
            return name;
        }
        String qualified = name.substring(name.lastIndexOf(' ', paren) + 1, paren);
        int method = qualified.lastIndexOf('.');
        return qualified.substring(qualified.lastIndexOf('.', method - 1) + 1);
    }

    private static double median(long[] v) {
        long[] sorted = v.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String perTrip(long[] v, int iters) {
        return String.join("/", Arrays.stream(v).mapToObj(x -> String.format("%.0f", (double) x / iters)).toList());
    }
}
