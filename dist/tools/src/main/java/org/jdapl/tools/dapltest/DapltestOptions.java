package org.jdapl.tools.dapltest;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdapl.tools.CommandArgs;
import org.jdapl.tools.ToolException;

/**
 * What {@code dapltest} was asked to do.
 *
 * @param test {@code T} (transaction test) or {@code P} (performance test)
 * @param iaName the IA both sides open ({@code -D})
 * @param threads threads of the transaction test ({@code -t})
 * @param endpoints endpoint pairs per thread ({@code -w})
 * @param iterations iterations of the operation list, or operations of the performance test ({@code -i})
 * @param pipeline operations in flight in the performance test ({@code -p})
 * @param validate check every byte that moved ({@code -V})
 * @param timeoutMicros the longest wait for one event ({@code -W}, seconds)
 * @param ops the operations
 */
public record DapltestOptions(char test, String iaName, int threads, int endpoints, int iterations, int pipeline,
                              boolean validate, long timeoutMicros, List<Op> ops) {
    /** The operations of a transaction test given none. */
    public static final List<String> DEFAULT_TRANSACTION_OPS =
            List.of("client", "SR", "256", "server", "SR", "256", "client", "RW", "4096", "2", "client", "RR", "4096");
    /** The operation of a performance test given none. */
    public static final List<String> DEFAULT_PERFORMANCE_OPS = List.of("RW", "4096");

    /** The usage text. */
    public static final String USAGE = """
            usage: dapltest -T T [-D IA] [-t THREADS] [-w EPS] [-i ITERATIONS] [-V] [-W SECONDS] [OP ...]
                   dapltest -T P [-D IA] [-i OPERATIONS] [-p PIPELINE] [-W SECONDS] [OP]
              -T T                  transaction test: every thread connects EPS endpoint pairs and runs
                                    the operation list ITERATIONS times on each (server and client in
                                    this process)
              -T P                  performance test: one endpoint pair, one operation, PIPELINE in flight;
                                    prints operations per second and bandwidth
              -D, --device IA       the IA both sides open (default emu0)
              -t, --threads N       threads (default 1)
              -w, --endpoints N     endpoint pairs per thread (default 1)
              -i, --iterations N    iterations (-T T, default 100) or operations (-T P, default 10000)
              -p, --pipeline N      operations in flight (-T P, default 16)
              -V, --validate        fill and check every buffer that moves
              -W, --timeout S       longest wait for one event (default 10)
              OP                    [client|server] SR|RR|RW SIZE [SEGMENTS]: who starts it, send/recv,
                                    RDMA Read or RDMA Write, bytes, scatter/gather entries
                                    (-T T default: client SR 256 server SR 256 client RW 4096 2 client RR 4096;
                                     -T P default: RW 4096)""";

    /**
     * Parses dapltest's arguments.
     *
     * @throws ToolException USAGE for a bad command line
     */
    public static DapltestOptions parse(List<String> args) {
        CommandArgs a = CommandArgs.parse("dapltest", args, Set.of("V"), Set.of("T", "D", "t", "w", "i", "p", "W"),
                Map.of("test", "T", "device", "D", "threads", "t", "endpoints", "w", "iterations", "i",
                        "pipeline", "p", "validate", "V", "timeout", "W"));
        String test = a.value("T", "");
        if (!test.equals("T") && !test.equals("P")) {
            throw ToolException.usage(test.isEmpty() ? "dapltest: -T T (transaction) or -T P (performance) is required"
                    : "dapltest: unknown test -T " + test + " (T or P)");
        }
        boolean transaction = test.equals("T");
        List<String> words = a.operands().isEmpty()
                ? (transaction ? DEFAULT_TRANSACTION_OPS : DEFAULT_PERFORMANCE_OPS) : a.operands();
        List<Op> ops = Op.parse(words, !transaction);
        if (!transaction && ops.size() != 1) {
            throw ToolException.usage("dapltest: the performance test runs one operation, not " + ops.size());
        }
        String ia = a.value("D", "emu0");
        if (ia.isBlank()) {
            throw ToolException.usage("dapltest: -D wants an IA name");
        }
        return new DapltestOptions(test.charAt(0), ia, a.intNumber("t", 1, 1, 256), a.intNumber("w", 1, 1, 1024),
                a.intNumber("i", transaction ? 100 : 10_000, 1, Integer.MAX_VALUE), a.intNumber("p", 16, 1, 4096),
                a.has("V"), a.number("W", 10, 1, 86_400) * 1_000_000, ops);
    }

    /** The largest size of the operations. */
    int maxSize() {
        return ops.stream().mapToInt(Op::size).max().orElse(1);
    }

    /** The most segments of the operations. */
    int maxSegments() {
        return ops.stream().mapToInt(Op::segments).max().orElse(1);
    }
}
