package org.jdapl.tools.soak;

import static org.jdapl.tools.CommandArgs.flag;
import static org.jdapl.tools.CommandArgs.valued;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import org.jdapl.tools.CommandArgs;
import org.jdapl.tools.ToolException;

/**
 * What {@code soak} was asked to do.
 *
 * @param iaName the IA the streams open ({@code -D}); the serving IA too unless a peer serves
 * @param seed the seed of every random choice ({@code -s})
 * @param operations DTOs to post, or 0 for a run bounded by duration ({@code -n})
 * @param durationSeconds seconds to run, or 0 for a run bounded by operations ({@code -t})
 * @param connections connections, one stream thread each ({@code -c})
 * @param window operations in flight per connection ({@code -w})
 * @param maxSize the largest message or RDMA ({@code -m})
 * @param faults the fault kinds, injected in turn ({@code -f})
 * @param intervalMillis the mean pause between faults ({@code -i})
 * @param minFaults the run goes on until every fault kind was injected this often ({@code -F})
 * @param device the network device the link and netem faults act on ({@code --dev})
 * @param cutMillis how long a LINKCUT keeps the link down ({@code --cut-ms}; longer than the keepalive bound)
 * @param serve serve instead of drive ({@code --serve})
 * @param connQual the serving PSP's connection qualifier ({@code -q})
 * @param peerCommand the command that starts a serving process (the operands), empty to serve in this process
 */
public record SoakOptions(String iaName, long seed, long operations, long durationSeconds, int connections,
                          int window, int maxSize, List<FaultKind> faults, long intervalMillis, long minFaults, String device,
                          long cutMillis, boolean serve, long connQual, List<String> peerCommand) {
    /** soak's options. */
    public static final CommandArgs.Syntax SYNTAX = new CommandArgs.Syntax("soak", List.of(
            "soak [-D IA] [-s SEED] [-n DTOS | -t SECONDS] [-c CONNECTIONS] [-w WINDOW] [-m SIZE]",
            "     [-f FAULT,...] [-i MILLIS] [-F N] [--dev DEVICE] [--cut-ms MILLIS] [-q QUAL] [-- PEER COMMAND]",
            "soak --serve [-D IA] [-q QUAL] [-w WINDOW] [-m SIZE]"), List.of(
            valued("D", "device", "IA", "the IA to open (default emu0)"),
            valued("s", "seed", "N", "seed of every random choice (default 1)"),
            valued("n", "operations", "N", "DTOs to post (default 100000)"),
            valued("t", "time", "S", "run for S seconds instead"),
            valued("c", "connections", "N", "connections, each driven by a thread of its own (default 8)"),
            valued("w", "window", "N", "operations in flight per connection (default 8)"),
            valued("m", "max-size", "SIZE", "largest message or RDMA, at least 64 (default 16k)"),
            valued("f", "faults", "LIST", "fault kinds injected in turn (default epfree,abrupt,graceful,iaclose;",
                    "none: no faults):",
                    "epfree abrupt graceful iaclose   (public API)",
                    "kill                             (needs a peer command)",
                    "linkblip linkcut loss duplicate reorder delay   (need --dev, root, ip, tc)"),
            valued("i", "interval", "MS", "mean pause between faults (default 200)"),
            valued("F", "min-faults", "N", "go on until every fault kind was injected at least N times (default 0)"),
            valued(null, "dev", "DEVICE", "network device of this namespace the connections cross"),
            valued(null, "cut-ms", "MS", "how long linkcut keeps the link down (default 4500: beyond the keepalive bound)"),
            valued("q", "qual", "N", "connection qualifier of the serving PSP (default 0x50414b)"),
            flag(null, "serve", "serve: open the IA, print 'soak: serving ADDRESS QUAL', echo and expose",
                    "memory until stdin ends ('reopen' on stdin closes and reopens the IA)")), List.of(
            "-- PEER COMMAND: start this command as the serving process (it must run soak --serve);",
            "'kill' kills and restarts it"));

    /** The usage text (picocli's, from {@link #SYNTAX}). */
    public static final String USAGE = SYNTAX.usage();

    /**
     * Parses soak's arguments.
     *
     * @throws ToolException USAGE for a bad command line
     */
    public static SoakOptions parse(List<String> args) {
        CommandArgs a = CommandArgs.parse(SYNTAX, args);
        String ia = a.value("D", "emu0");
        if (ia.isBlank()) {
            throw ToolException.usage("soak: -D wants an IA name");
        }
        List<FaultKind> faults = faults(a.value("f", "epfree,abrupt,graceful,iaclose"));
        String device = a.value("dev", "");
        List<String> peer = a.operands();
        for (FaultKind f : faults) {
            if (f.needs == FaultKind.Needs.PEER && peer.isEmpty()) {
                throw ToolException.usage("soak: fault " + f.option() + " needs a peer command (after --)");
            }
            if (f.needs == FaultKind.Needs.DEVICE && device.isEmpty()) {
                throw ToolException.usage("soak: fault " + f.option() + " needs --dev");
            }
        }
        long duration = a.number("t", 0, 0, 365L * 86_400);
        return new SoakOptions(ia, a.number("s", 1, Long.MIN_VALUE, Long.MAX_VALUE),
                duration > 0 && !a.has("n") ? 0 : a.number("n", 100_000, 1, Long.MAX_VALUE), duration,
                a.intNumber("c", 8, 1, 1024), a.intNumber("w", 8, 1, 256), a.intNumber("m", 16 * 1024, 64, 1 << 24),
                faults, a.number("i", 200, 0, 3_600_000), a.number("F", 0, 0, Long.MAX_VALUE), device, a.number("cut-ms", 4500, 0, 600_000), a.has("serve"),
                a.number("q", 0x50414bL, 1, Long.MAX_VALUE), peer);
    }

    private static List<FaultKind> faults(String list) {
        List<FaultKind> kinds = new ArrayList<>();
        if (list.isBlank() || list.equals("none")) {
            return kinds;
        }
        EnumSet<FaultKind> seen = EnumSet.noneOf(FaultKind.class);
        for (String word : list.split(",")) {
            FaultKind kind;
            try {
                kind = FaultKind.valueOf(word.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw ToolException.usage("soak: unknown fault '" + word + "'");
            }
            if (seen.add(kind)) {
                kinds.add(kind);
            }
        }
        return List.copyOf(kinds);
    }
}
