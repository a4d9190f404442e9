package org.jdapl.tools.dapltest;

import static org.jdapl.tools.CommandArgs.flag;
import static org.jdapl.tools.CommandArgs.valued;

import java.net.InetSocketAddress;
import java.util.List;
import org.jdapl.dat.Qos;
import org.jdapl.tools.CommandArgs;
import org.jdapl.tools.ToolException;

/**
 * What {@code dapltest} was asked to do, from OFED dapltest's command line.
 *
 * @param test {@code S} server, {@code T} transaction, {@code P} performance, {@code F} functional,
 *             {@code L} limit, {@code Q} quit
 * @param server the server ({@code -s HOST[:PORT]}), or null for the self-contained form
 * @param iaName the IA ({@code -D})
 * @param connQual the server's connection qualifier ({@code -q})
 * @param threads threads of the transaction test ({@code -t})
 * @param endpoints endpoint pairs per thread ({@code -w}, {@code -T T})
 * @param iterations iterations ({@code -T T}) or timed operations ({@code -T P}) ({@code -i})
 * @param pipeline operations in flight ({@code -p}, {@code -T P})
 * @param poll whether completions are polled ({@code -m p} of {@code -T P}, {@code -P} of {@code -T T})
 * @param warmup untimed operations before the timed ones ({@code --warmup}, {@code -T P})
 * @param validate check every byte that moved ({@code -V})
 * @param qos the endpoints' quality of service ({@code -R BE|HT|LL|EC|PM})
 * @param debug print the parsed command first ({@code -d})
 * @param feature the functional feature ({@code -f}) and its cases (none: all)
 * @param maximum the most objects of each kind ({@code -m}, {@code -T L})
 * @param width how many times the limit test runs ({@code -w}, {@code -T L})
 * @param timeoutMicros the longest wait for one event ({@code -W}, seconds)
 * @param ops the operations
 * @param args the command line as given (a client sends it to the server)
 */
public record DapltestOptions(char test, InetSocketAddress server, String iaName, long connQual, int threads,
                              int endpoints, int iterations, int pipeline, boolean poll, int warmup, boolean validate, Qos qos, boolean debug,
                              String feature, List<Integer> cases, int maximum, int width, long timeoutMicros,
                              List<Op> ops, List<String> args) {
    /** dapltest's connection qualifier, as OFED's dapltest ({@code SERVER_PORT_NUMBER}). */
    public static final long DEFAULT_CONN_QUAL = 0xBabb1eL;
    /** The operations of a transaction test given none. */
    public static final List<String> DEFAULT_TRANSACTION_OPS =
            List.of("client", "SR", "256", "server", "SR", "256", "client", "RW", "4096", "2", "client", "RR", "4096");
    /** The operation of a performance test given none. */
    public static final List<String> DEFAULT_PERFORMANCE_OPS = List.of("RW", "4096");

    /** dapltest's options, as OFED's dapltest names them. */
    public static final CommandArgs.Syntax SYNTAX = new CommandArgs.Syntax("dapltest", List.of(
            "dapltest -T S [-D IA] [-q CONN_QUAL] [-d]",
            "dapltest -T T [-s HOST[:PORT]] [-D IA] [-t THREADS] [-w EPS] [-i ITERATIONS] [-V] [-P] [-R QOS] [-d]",
            "                          [OP ...]",
            "dapltest -T P [-s HOST[:PORT]] [-D IA] [-i OPERATIONS] [-p PIPELINE] [-m p|b] [--warmup N] [-R QOS]",
            "                          [-d] [OP]",
            "dapltest -T F [-s HOST[:PORT]] [-D IA] -f FEATURE [CASE ...]",
            "dapltest -T L [-D IA] [-w WIDTH] [-m MAXIMUM]",
            "dapltest -T Q -s HOST[:PORT] [-D IA]"), List.of(
            valued("T", "test", "S|T|P|F|L|Q",
                    "S: server: serves every client's test, one after another and at once, until a client",
                    "   sends -T Q",
                    "T: transaction test: THREADS threads x EPS endpoint pairs run the operation list",
                    "   ITERATIONS times",
                    "P: performance test: one endpoint pair, one operation, PIPELINE in flight",
                    "F: functional feature tests: hwconn, cqmgt, endpoint, pz, mem, connmgt, queryinfo,",
                    "   dataxfer, dataxfer_client, ns (CASE numbers: all if none)",
                    "L: limit test: IAs, PZs, EVDs, EPs, LMRs, RMRs and posted receives up to",
                    "   DAT_INSUFFICIENT_RESOURCES or MAXIMUM, then all freed",
                    "Q: tells the server to stop"),
            valued("s", "server", "HOST[:PORT]", "the server (PORT: the server IA's port on the emulated tcp fabric);",
                    "without -s, -T T, -T P and -T F run a server in this process"),
            valued("D", "device", "IA", "the IA (default emu0)"),
            valued("q", "conn-qual", "CONN_QUAL", "the server's connection qualifier (default 0xBabb1e, as OFED's)"),
            valued("t", "threads", "N", "threads (-T T, default 1)"),
            valued("w", "endpoints", "N", "endpoint pairs per thread (-T T, default 1); runs (-T L, default 1)"),
            valued("i", "iterations", "N", "iterations (-T T, default 100) or timed operations (-T P, default 10000)"),
            valued("p", "pipeline", "N", "operations in flight (-T P, default 16)"),
            valued("m", "mode", "p|b|N", "poll (dat_evd_dequeue) or block (dat_evd_wait) for completions",
                    "(-T P, default b); most objects of each kind (-T L, default 256)"),
            valued(null, "warmup", "N", "untimed operations first (-T P, default a fifth of -i, at least 100)"),
            valued("f", "feature", "FEATURE", "the feature of -T F"),
            flag("V", "validate", "fill and check every buffer that moves"),
            flag("P", "poll", "poll for completions (-T T)"),
            valued("R", "qos", "BE|HT|LL|EC|PM", "the endpoints' QoS: best effort (default), high throughput, low latency,",
                    "economy, premium (-T T, -T P)"),
            flag("d", "debug", "print the parsed command first"),
            valued("W", "timeout", "S", "the longest wait for one event (default 10)")), List.of(
            "OP: [client|server] SR|RR|RW [SIZE [SEGMENTS]] (SIZE 4096 if left out; -T T default: client SR 256",
            "    server SR 256 client RW 4096 2 client RR 4096; -T P: RW 4096)"));

    /** The usage text (picocli's, from {@link #SYNTAX}). */
    public static final String USAGE = SYNTAX.usage();

    /**
     * Parses dapltest's arguments.
     *
     * @throws ToolException USAGE for a bad command line
     */
    public static DapltestOptions parse(List<String> args) {
        CommandArgs a = CommandArgs.parse(SYNTAX, args);
        String test = a.value("T", "");
        if (test.length() != 1 || "STPFLQ".indexOf(test.charAt(0)) < 0) {
            throw ToolException.usage(test.isEmpty() ? "dapltest: -T S|T|P|F|L|Q is required"
                    : "dapltest: unknown test -T " + test + " (S, T, P, F, L or Q)");
        }
        char t = test.charAt(0);
        only(a, t, "s", "TPFQ");
        only(a, t, "t", "T");
        only(a, t, "w", "TL");
        only(a, t, "i", "TP");
        only(a, t, "p", "P");
        only(a, t, "warmup", "P");
        only(a, t, "m", "PL");
        only(a, t, "f", "F");
        only(a, t, "V", "T");
        only(a, t, "P", "T");
        only(a, t, "R", "TP");
        InetSocketAddress server = a.has("s") ? CommandArgs.hostAndPort("dapltest", "-s", a.value("s", "")) : null;
        if (t == 'Q' && server == null) {
            throw ToolException.usage("dapltest: -T Q needs the server (-s HOST[:PORT])");
        }
        String ia = a.value("D", "emu0");
        if (ia.isBlank()) {
            throw ToolException.usage("dapltest: -D wants an IA name");
        }
        List<Op> ops = List.of();
        String feature = "";
        List<Integer> cases = List.of();
        if (t == 'T' || t == 'P') {
            List<String> words = a.operands().isEmpty()
                    ? (t == 'T' ? DEFAULT_TRANSACTION_OPS : DEFAULT_PERFORMANCE_OPS) : a.operands();
            ops = Op.parse(words, t == 'P');
            if (t == 'P' && (ops.size() != 1 || !ops.getFirst().clientInitiates())) {
                throw ToolException.usage("dapltest: the performance test runs one operation the client starts");
            }
            if (ops.size() > 256) {
                throw ToolException.usage("dapltest: at most 256 operations, not " + ops.size());
            }
        } else if (t == 'F') {
            feature = a.value("f", "");
            if (!FunctionalTests.FEATURES.contains(feature)) {
                throw ToolException.usage("dapltest: -f wants a feature (" + String.join(", ", FunctionalTests.FEATURES)
                        + ")" + (feature.isEmpty() ? "" : ", not '" + feature + "'"));
            }
            cases = a.operands().stream()
                    .map(w -> (int) CommandArgs.parseNumber("dapltest", "case", w, 0, 99)).toList();
        } else if (!a.operands().isEmpty()) {
            throw ToolException.usage("dapltest: -T " + t + " takes no operands: " + String.join(" ", a.operands()));
        }
        boolean poll = false;
        int maximum = 256;
        if (t == 'P') {
            String mode = a.value("m", "b");
            if (!mode.equals("p") && !mode.equals("b")) {
                throw ToolException.usage("dapltest: -m wants p (poll) or b (block), not '" + mode + "'");
            }
            poll = mode.equals("p");
        } else if (t == 'T') {
            poll = a.has("P");
        } else if (t == 'L') {
            maximum = a.intNumber("m", 256, 1, 1 << 20);
        }
        int iterations = a.intNumber("i", t == 'P' ? 10_000 : 100, 1, Integer.MAX_VALUE / 2);
        int warmup = a.intNumber("warmup", t == 'P' ? Math.max(100, iterations / 5) : 0, 0, Integer.MAX_VALUE / 2);
        return new DapltestOptions(t, server, ia, a.number("q", DEFAULT_CONN_QUAL, 1, Long.MAX_VALUE),
                a.intNumber("t", 1, 1, 256), t == 'T' ? a.intNumber("w", 1, 1, 1024) : 1, iterations,
                a.intNumber("p", 16, 1, 4096), poll, warmup, a.has("V"), qos(a.value("R", "BE")), a.has("d"), feature, cases, maximum,
                t == 'L' ? a.intNumber("w", 1, 1, 100) : 1, a.number("W", 10, 1, 86_400) * 1_000_000, ops,
                List.copyOf(args));
    }

    private static Qos qos(String text) {
        return switch (text) {
            case "BE" -> Qos.BEST_EFFORT;
            case "HT" -> Qos.HIGH_THROUGHPUT;
            case "LL" -> Qos.LOW_LATENCY;
            case "EC" -> Qos.ECONOMY;
            case "PM" -> Qos.PREMIUM;
            default -> throw ToolException.usage("dapltest: -R wants BE, HT, LL, EC or PM, not '" + text + "'");
        };
    }

    /** The parsed command, one field a line (for {@code -d}). */
    String describe() {
        StringBuilder b = new StringBuilder();
        b.append("dapltest: -T ").append(test).append(", IA ").append(iaName).append(", server ")
                .append(server == null ? "in this process" : server.getHostString() + ":" + server.getPort())
                .append(", conn_qual 0x").append(Long.toHexString(connQual)).append('\n');
        switch (test) {
            case 'T' -> b.append("dapltest: threads ").append(threads).append(", endpoints per thread ").append(endpoints)
                    .append(", iterations ").append(iterations).append(", validate ").append(validate).append(", poll ")
                    .append(poll).append(", QoS ").append(qos).append('\n');
            case 'P' -> b.append("dapltest: operations ").append(iterations).append(", warm-up ").append(warmup)
                    .append(", pipeline ").append(pipeline).append(", poll ").append(poll).append(", QoS ").append(qos)
                    .append('\n');
            case 'F' -> b.append("dapltest: feature ").append(feature).append(", cases ")
                    .append(cases.isEmpty() ? "all" : cases.toString()).append('\n');
            case 'L' -> b.append("dapltest: maximum ").append(maximum).append(", runs ").append(width).append('\n');
            default -> {
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            b.append("dapltest: op[").append(i).append("] ").append(ops.get(i)).append('\n');
        }
        b.append("dapltest: timeout ").append(timeoutMicros / 1_000_000).append(" s");
        return b.toString();
    }

    private static void only(CommandArgs a, char test, String option, String tests) {
        if (a.has(option) && tests.indexOf(test) < 0) {
            throw ToolException.usage("dapltest: " + (option.length() == 1 ? "-" : "--") + option
                    + " does not apply to -T " + test);
        }
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
