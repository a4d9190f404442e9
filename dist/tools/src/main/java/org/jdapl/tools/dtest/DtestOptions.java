package org.jdapl.tools.dtest;

import static org.jdapl.tools.CommandArgs.flag;
import static org.jdapl.tools.CommandArgs.valued;

import java.net.InetSocketAddress;
import java.util.List;
import org.jdapl.tools.CommandArgs;
import org.jdapl.tools.ToolException;

/**
 * What {@code dtest} was asked to do.
 *
 * @param mode self-contained, server or client
 * @param iaName the IA to open ({@code -P})
 * @param server the server's address ({@code -h host[:port]}), client mode only
 * @param connQual the connection qualifier the server listens on ({@code -q})
 * @param bufLen the RDMA buffer length ({@code -b})
 * @param burst the number of each operation measured ({@code -B})
 * @param msgLen the ping-pong message length ({@code -m})
 * @param connectOnly connect and disconnect, no data ({@code -C})
 * @param validate check every byte that moved ({@code -V})
 * @param timeoutMicros the longest wait for one event ({@code -t}, seconds)
 * @param serverWaitMicros how long a server waits for its client ({@code -W}, seconds)
 * @param ofed speak OFED dtest's wire ({@code -O}): its parameter exchange, private data, RMR triplets and flow
 * @param signalRate with {@code -O}: one RDMA Write of this many is signaled ({@code -S}, as OFED's)
 * @param acceptDelayMicros with {@code -O}: how long a server waits before it accepts ({@code -d} seconds, as OFED's)
 */
public record DtestOptions(Mode mode, String iaName, InetSocketAddress server, long connQual, int bufLen, int burst,
                           int msgLen, boolean connectOnly, boolean validate, long timeoutMicros,
                           long serverWaitMicros, boolean ofed, int signalRate, long acceptDelayMicros) {
    /** How dtest runs. */
    public enum Mode {
        /** Both sides in this process (neither -s nor -h). */
        SELF,
        /** The passive side ({@code -s}). */
        SERVER,
        /** The active side ({@code -h}). */
        CLIENT
    }

    /** The default IA: the emulated provider's. */
    public static final String DEFAULT_IA = "emu0";
    /** uDAPL dtest's server connection qualifier. */
    public static final long DEFAULT_CONN_QUAL = 45248;
    /** The smallest ping-pong message: the message header. */
    public static final int MIN_MSG_LEN = Wire.HEADER;

    /** dtest's options. */
    public static final CommandArgs.Syntax SYNTAX = new CommandArgs.Syntax("dtest", List.of(
            "dtest [-s | -h HOST[:PORT]] [-P IA] [-q CONN_QUAL] [-b BUFLEN] [-B BURST] [-m MSGLEN]",
            "      [-C] [-V] [-t SECONDS] [-W SECONDS] [-O [-S RATE] [-d SECONDS]]"), List.of(
            flag("s", "server", "wait for one client, serve it, print the server's costs"),
            valued("h", "host", "HOST[:PORT]", "connect to the server at HOST (PORT: the server IA's port,",
                    "for fabrics that address IAs by port, e.g. the emulated tcp fabric)"),
            valued("P", "provider", "IA", "the IA name to open (default emu0)"),
            valued("q", "conn-qual", "N", "the server's connection qualifier (default 45248)"),
            valued("b", "buflen", "N", "RDMA buffer length, e.g. 4096, 64k, 1m (default 64k)"),
            valued("B", "burst", "N", "operations of each kind to measure (default 100)"),
            valued("m", "msglen", "N", "ping-pong message length (default 64, at least 32)"),
            flag("C", "connect-only", "connect (after the reject probe) and disconnect, move no data"),
            flag("V", "validate", "fill and check every buffer that moves"),
            valued("t", "timeout", "S", "longest wait for one event (default 10)"),
            valued("W", "server-wait", "S", "how long a server waits for its client (default 300)"),
            flag("O", "ofed", "speak OFED dtest's wire (dapl2-utils' dtest is the peer): the server's",
                    "parameters over TCP port 15828, 48 bytes of private data each way, the",
                    "16-byte DAT_RMR_TRIPLET in network order, RDMA Write and Read both ways,",
                    "a ping-pong of 100 buffer-length messages (defaults then as OFED's:",
                    "-b 4m, -B 1000; -h HOST is where the server's parameters come from)"),
            valued("S", "signal", "N", "with -O: signal one RDMA Write in N (default 10)"),
            valued("d", "delay", "S", "with -O: the server waits S seconds before it accepts")),
            List.of("Neither -s nor -h: self-contained, server and client in this process."));

    /** The usage text (picocli's, from {@link #SYNTAX}). */
    public static final String USAGE = SYNTAX.usage();

    /**
     * Parses dtest's arguments.
     *
     * @throws ToolException USAGE for a bad command line
     */
    public static DtestOptions parse(List<String> args) {
        CommandArgs a = CommandArgs.parse(SYNTAX, args);
        if (!a.operands().isEmpty()) {
            throw ToolException.usage("dtest: unexpected argument '" + a.operands().getFirst() + "'");
        }
        if (a.has("s") && a.has("h")) {
            throw ToolException.usage("dtest: -s (server) and -h (client) exclude each other");
        }
        Mode mode = a.has("s") ? Mode.SERVER : a.has("h") ? Mode.CLIENT : Mode.SELF;
        InetSocketAddress server = mode == Mode.CLIENT ? CommandArgs.hostAndPort("dtest", "-h", a.value("h", "")) : null;
        String ia = a.value("P", DEFAULT_IA);
        if (ia.isBlank()) {
            throw ToolException.usage("dtest: -P wants an IA name");
        }
        boolean ofed = a.has("O");
        if (!ofed && (a.has("S") || a.has("d"))) {
            throw ToolException.usage("dtest: -S and -d go with -O (OFED dtest's wire)");
        }
        return new DtestOptions(mode, ia, server,
                a.number("q", DEFAULT_CONN_QUAL, 0, Long.MAX_VALUE),
                a.intNumber("b", ofed ? OfedWire.DEFAULT_BUF_LEN : 64 * 1024, ofed ? OfedWire.TRIPLET : 1, 1 << 30),
                a.intNumber("B", ofed ? OfedWire.DEFAULT_BURST : 100, 1, 100_000_000),
                a.intNumber("m", 64, MIN_MSG_LEN, 1 << 20),
                a.has("C"), a.has("V"),
                a.number("t", 10, 1, 86_400) * 1_000_000,
                a.number("W", 300, 1, 86_400 * 7) * 1_000_000,
                ofed, a.intNumber("S", OfedWire.DEFAULT_SIGNAL_RATE, 1, 100_000_000),
                a.number("d", 0, 0, 3_600) * 1_000_000);
    }
}
