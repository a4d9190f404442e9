package org.jdapl.tools;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A command line parsed as getopt does: short options ({@code -s}, {@code -b 4096},
 * {@code -b4096}), long options ({@code --buffer 4096}, {@code --buffer=4096}) mapped onto the
 * short ones, {@code --} ending the options, and the operands that follow.
 */
public final class CommandArgs {
    private final String command;
    private final Map<String, String> values = new HashMap<>();
    private final List<String> operands = new ArrayList<>();

    private CommandArgs(String command) {
        this.command = command;
    }

    /**
     * Parses {@code args}.
     *
     * @param command the command name, for messages
     * @param flags the short options without a value (e.g. {@code "s"})
     * @param valued the short options that take a value (e.g. {@code "b"})
     * @param longNames long option names mapped onto short ones (e.g. {@code "server" -> "s"})
     * @throws ToolException USAGE for an unknown option or a missing value
     */
    public static CommandArgs parse(String command, List<String> args, Set<String> flags, Set<String> valued,
                                    Map<String, String> longNames) {
        CommandArgs parsed = new CommandArgs(command);
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg == null) {
                continue;
            }
            if (arg.equals("--")) {
                parsed.operands.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (arg.startsWith("--")) {
                String name = arg.substring(2);
                String inline = null;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    inline = name.substring(eq + 1);
                    name = name.substring(0, eq);
                }
                String shortName = longNames.get(name);
                if (shortName == null) {
                    throw ToolException.usage(command + ": unknown option --" + name);
                }
                if (valued.contains(shortName)) {
                    if (inline == null) {
                        if (i + 1 >= args.size()) {
                            throw ToolException.usage(command + ": option --" + name + " needs a value");
                        }
                        inline = args.get(++i);
                    }
                    parsed.values.put(shortName, inline);
                } else {
                    if (inline != null) {
                        throw ToolException.usage(command + ": option --" + name + " takes no value");
                    }
                    parsed.values.put(shortName, "");
                }
            } else if (arg.length() > 1 && arg.charAt(0) == '-' && !isNumber(arg)) {
                for (int k = 1; k < arg.length(); k++) {
                    String name = String.valueOf(arg.charAt(k));
                    if (flags.contains(name)) {
                        parsed.values.put(name, "");
                    } else if (valued.contains(name)) {
                        String value;
                        if (k + 1 < arg.length()) {
                            value = arg.substring(k + 1);
                        } else if (i + 1 < args.size()) {
                            value = args.get(++i);
                        } else {
                            throw ToolException.usage(command + ": option -" + name + " needs a value");
                        }
                        parsed.values.put(name, value);
                        break;
                    } else {
                        throw ToolException.usage(command + ": unknown option -" + name);
                    }
                }
            } else {
                parsed.operands.add(arg);
            }
        }
        return parsed;
    }

    private static boolean isNumber(String arg) {
        return arg.length() > 1 && Character.isDigit(arg.charAt(1));
    }

    /** Whether the option was given. */
    public boolean has(String option) {
        return values.containsKey(option);
    }

    /** The option's value, or {@code fallback} if it was not given. */
    public String value(String option, String fallback) {
        return values.getOrDefault(option, fallback);
    }

    /**
     * The option's value as an integer in {@code [min, max]}; sizes may end in k, m or g (powers of 1024).
     *
     * @throws ToolException USAGE for a value that is no number or out of range
     */
    public long number(String option, long fallback, long min, long max) {
        String text = values.get(option);
        if (text == null) {
            return fallback;
        }
        return parseNumber(command, "-" + option, text, min, max);
    }

    /** {@link #number} for an int. */
    public int intNumber(String option, int fallback, int min, int max) {
        return (int) number(option, fallback, min, max);
    }

    /**
     * Parses a number such as {@code 4096}, {@code 64k}, {@code 1m} or {@code 0x1000}.
     *
     * @throws ToolException USAGE for a value that is no number or out of {@code [min, max]}
     */
    public static long parseNumber(String command, String what, String text, long min, long max) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        long scale = 1;
        if (t.endsWith("k")) {
            scale = 1024;
        } else if (t.endsWith("m")) {
            scale = 1024 * 1024;
        } else if (t.endsWith("g")) {
            scale = 1024L * 1024 * 1024;
        }
        if (scale != 1) {
            t = t.substring(0, t.length() - 1);
        }
        long value;
        try {
            value = t.startsWith("0x") ? Long.parseLong(t.substring(2), 16) : Long.parseLong(t);
            value = Math.multiplyExact(value, scale);
        } catch (NumberFormatException | ArithmeticException e) {
            throw ToolException.usage(command + ": " + what + " wants a number, not '" + text + "'");
        }
        if (value < min || value > max) {
            throw ToolException.usage(command + ": " + what + " " + text + " is out of range [" + min + ", " + max + "]");
        }
        return value;
    }

    /** The operands (arguments that are not options), in order. */
    public List<String> operands() {
        return List.copyOf(operands);
    }
}
