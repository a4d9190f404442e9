package org.jdapl.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The launcher's own options, which come before the command: {@code --log-level},
 * {@code --log-file}, {@code -Dname=value}, {@code --help}. The first other argument is the
 * command; it and everything after it go to the command unchanged. picocli parses them and writes
 * the usage.
 *
 * @param logLevel error, warn, info, debug, trace or off
 * @param logFile where the log goes (null: standard error)
 * @param properties system properties to set (e.g. {@code dat.conf})
 * @param help whether {@code --help} was given
 * @param command the command and its arguments (empty: the interactive shell)
 */
record LaunchOptions(String logLevel, Path logFile, Map<String, String> properties, boolean help,
                     List<String> command) {
    static final List<String> LEVELS = List.of("off", "error", "warn", "info", "debug", "trace");

    /** The command line as picocli sees it. */
    @Command(name = "jdapl", synopsisHeading = "", sortOptions = false, usageHelpWidth = 120,
            customSynopsis = "usage: jdapl [--log-level LEVEL] [--log-file FILE] [-Dname=value ...] [COMMAND [ARGS ...]]",
            footer = {
                "exit status: 0 success, 1 failure, 2 bad command line or unknown command, 3 the application did not start"})
    static final class Line {
        @Parameters(paramLabel = "COMMAND", arity = "0..*", description = {
            "run one command and exit with its status:",
            "  providers            the IAs of the registry (dat:source, dat:list, dat:providers)",
            "  dtest [--help]       uDAPL's dtest (self-contained, -s server, -h client)",
            "  dapltest [--help]    uDAPL's dapltest (-T T transaction, -T P performance)",
            "  soak [--help]        many connections streaming checked DTOs while faults are injected",
            "  any other Gogo command, e.g. lb, scr:list, dat:list",
            "without a command: the interactive Gogo shell (dat:dtest, dat:dapltest, ...)"})
        List<String> command = new ArrayList<>();

        @Option(names = "--log-level", paramLabel = "LEVEL",
                description = "off, error, warn (default), info, debug or trace")
        String logLevel = "warn";

        @Option(names = "--log-file", paramLabel = "FILE",
                description = "write the log to FILE (overwritten) instead of standard error")
        String logFile;

        @Option(names = "-D", paramLabel = "name=value", mapFallbackValue = Option.NULL_VALUE,
                description = "a system property, e.g. -Ddat.conf=/path/dat.conf")
        Map<String, String> properties = new LinkedHashMap<>();

        @Option(names = {"--help", "-h", "-?"}, description = "this text")
        boolean help;
    }

    static final String USAGE = new CommandLine(new Line()).getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing();

    /** A command line the launcher cannot use. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static LaunchOptions parse(String[] args) throws UsageException {
        Line line = new Line();
        CommandLine cli = new CommandLine(line);
        cli.setStopAtPositional(true);
        cli.setOverwrittenOptionsAllowed(true);
        try {
            cli.parseArgs(args);
        } catch (ParameterException e) {
            throw new UsageException(message(e));
        }
        String level = line.logLevel.toLowerCase(Locale.ROOT);
        if (!LEVELS.contains(level)) {
            throw new UsageException("--log-level wants one of " + String.join(", ", LEVELS) + ", not '"
                    + line.logLevel + "'");
        }
        if (line.logFile != null && line.logFile.isBlank()) {
            throw new UsageException("--log-file wants a file name");
        }
        for (Map.Entry<String, String> p : line.properties.entrySet()) {
            if (p.getKey().isEmpty() || p.getValue() == null) {
                throw new UsageException("-D wants name=value, not '" + p.getKey() + "'");
            }
        }
        return new LaunchOptions(level, line.logFile == null ? null : Path.of(line.logFile),
                line.properties, line.help, List.copyOf(line.command));
    }

    /** picocli's complaint in the launcher's words. */
    private static String message(ParameterException e) {
        if (e instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            return "unknown option " + u.getUnmatched().getFirst() + " (options of a command come after it)";
        }
        if (e instanceof MissingParameterException m && !m.getMissing().isEmpty()
                && m.getMissing().getFirst() instanceof CommandLine.Model.OptionSpec o) {
            return o.longestName() + " needs a value";
        }
        String text = e.getMessage();
        if (text.contains("KEY=VALUE")) {
            return "-D wants name=value: " + text;
        }
        return text;
    }

    /** Whether the interactive shell runs (no command). */
    boolean interactive() {
        return command.isEmpty();
    }
}
