package org.jdapl.launcher;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The launcher's own options, which come before the command: {@code --log-level},
 * {@code --log-file}, {@code -Dname=value}, {@code --help}. The first other argument is the
 * command; it and everything after it go to the command unchanged.
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

    static final String USAGE = """
            usage: jdapl [--log-level LEVEL] [--log-file FILE] [-Dname=value ...] [COMMAND [ARGS ...]]
              COMMAND               run one command and exit with its status:
                                      providers            the IAs of the registry (dat:source, dat:list, dat:providers)
                                      dtest [--help]       uDAPL's dtest (self-contained, -s server, -h client)
                                      dapltest [--help]    uDAPL's dapltest (-T T transaction, -T P performance)
                                      soak [--help]        many connections streaming checked DTOs while faults are injected
                                      any other Gogo command, e.g. lb, scr:list, dat:list
                                    without a command: the interactive Gogo shell (dat:dtest, dat:dapltest, ...)
              --log-level LEVEL     off, error, warn (default), info, debug or trace
              --log-file FILE       write the log to FILE (overwritten) instead of standard error
              -Dname=value          a system property, e.g. -Ddat.conf=/path/dat.conf
              --help                this text
            exit status: 0 success, 1 failure, 2 bad command line or unknown command, 3 the application did not start""";

    /** A command line the launcher cannot use. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static LaunchOptions parse(String[] args) throws UsageException {
        String level = "warn";
        Path file = null;
        Map<String, String> properties = new LinkedHashMap<>();
        boolean help = false;
        int i = 0;
        while (i < args.length) {
            String arg = args[i];
            if (arg.equals("--")) {
                i++;
                break;
            } else if (arg.equals("--help") || arg.equals("-h") || arg.equals("-?")) {
                help = true;
                i++;
            } else if (arg.equals("--log-level") || arg.startsWith("--log-level=")) {
                String value = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : valueOf(args, ++i, arg);
                level = value.toLowerCase(Locale.ROOT);
                if (!LEVELS.contains(level)) {
                    throw new UsageException("--log-level wants one of " + String.join(", ", LEVELS) + ", not '" + value + "'");
                }
                i++;
            } else if (arg.equals("--log-file") || arg.startsWith("--log-file=")) {
                String value = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : valueOf(args, ++i, arg);
                if (value.isBlank()) {
                    throw new UsageException("--log-file wants a file name");
                }
                file = Path.of(value);
                i++;
            } else if (arg.startsWith("-D")) {
                String definition = arg.length() > 2 ? arg.substring(2) : valueOf(args, ++i, arg);
                int eq = definition.indexOf('=');
                if (eq <= 0) {
                    throw new UsageException("-D wants name=value, not '" + definition + "'");
                }
                properties.put(definition.substring(0, eq), definition.substring(eq + 1));
                i++;
            } else if (arg.startsWith("-")) {
                throw new UsageException("unknown option " + arg + " (options of a command come after it)");
            } else {
                break;
            }
        }
        return new LaunchOptions(level, file, properties, help, List.of(args).subList(i, args.length));
    }

    private static String valueOf(String[] args, int index, String option) throws UsageException {
        if (index >= args.length) {
            throw new UsageException(option + " needs a value");
        }
        return args[index];
    }

    /** Whether the interactive shell runs (no command). */
    boolean interactive() {
        return command.isEmpty();
    }
}
