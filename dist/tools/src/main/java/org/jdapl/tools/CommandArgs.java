package org.jdapl.tools;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * A tool's command line, parsed by picocli as getopt parses one: short options ({@code -s},
 * {@code -b 4096}, {@code -b4096}, clustered {@code -sV}), long options ({@code --buflen 4096},
 * {@code --buflen=4096}), an option given twice keeps its last value, {@code --} ends the options, and
 * the operands (anywhere between the options, and after {@code --}) are kept in order. The tool
 * declares its options once ({@link Option}); picocli writes the usage from them.
 */
public final class CommandArgs {
    /**
     * One option of a tool.
     *
     * @param shortName the short name without the dash ({@code "b"}), or null for a long option only
     * @param longName the long name without the dashes ({@code "buflen"}), or null for a short one only
     * @param label the value's label in the usage ({@code "N"}), or null for an option without a value
     * @param description the lines of its description in the usage
     */
    public record Option(String shortName, String longName, String label, List<String> description) {
        /** The name the tool asks for it by: the short name, else the long one. */
        public String key() {
            return shortName != null ? shortName : longName;
        }
    }

    /** An option without a value. */
    public static Option flag(String shortName, String longName, String... description) {
        return new Option(shortName, longName, null, List.of(description));
    }

    /** An option with a value. */
    public static Option valued(String shortName, String longName, String label, String... description) {
        return new Option(shortName, longName, label, List.of(description));
    }

    /**
     * What a tool's command line looks like.
     *
     * @param command the command name, for messages and the usage
     * @param synopsis the usage's first lines, after {@code usage: }
     * @param options the options
     * @param footer lines after the options in the usage (the operands), may be empty
     */
    public record Syntax(String command, List<String> synopsis, List<Option> options, List<String> footer) {
        /** The usage text picocli writes from the syntax. */
        public String usage() {
            return new CommandLine(spec(this).spec()).getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing();
        }
    }

    private record Built(CommandSpec spec, Map<String, OptionSpec> byKey, PositionalParamSpec operands) {
    }

    private static final Pattern FLAG_WITH_VALUE = Pattern.compile("option '([^']+)' should be specified without");

    private final String command;
    private final Map<String, String> values;
    private final List<String> operands;

    private CommandArgs(String command, Map<String, String> values, List<String> operands) {
        this.command = command;
        this.values = values;
        this.operands = operands;
    }

    private static Built spec(Syntax syntax) {
        CommandSpec spec = CommandSpec.create().name(syntax.command());
        spec.parser().overwrittenOptionsAllowed(true).posixClusteredShortOptionsAllowed(true)
                .unmatchedArgumentsAllowed(false).caseInsensitiveEnumValuesAllowed(false);
        List<String> synopsis = new ArrayList<>();
        for (int i = 0; i < syntax.synopsis().size(); i++) {
            synopsis.add((i == 0 ? "usage: " : "       ") + syntax.synopsis().get(i));
        }
        spec.usageMessage().synopsisHeading("").customSynopsis(synopsis.toArray(String[]::new)).width(120)
                .longOptionsMaxWidth(24).sortOptions(false)
                .footer(syntax.footer().toArray(String[]::new));
        Map<String, OptionSpec> byKey = new LinkedHashMap<>();
        for (Option o : syntax.options()) {
            List<String> names = new ArrayList<>();
            if (o.shortName() != null) {
                names.add("-" + o.shortName());
            }
            if (o.longName() != null) {
                names.add("--" + o.longName());
            }
            OptionSpec.Builder b = OptionSpec.builder(names.toArray(String[]::new))
                    .description(o.description().toArray(String[]::new));
            if (o.label() == null) {
                b.arity("0").type(boolean.class);
            } else {
                b.arity("1").type(String.class).paramLabel(o.label());
            }
            OptionSpec built = b.build();
            spec.addOption(built);
            byKey.put(o.key(), built);
        }
        PositionalParamSpec operands = PositionalParamSpec.builder().index("0..*").arity("0..*")
                .type(List.class).auxiliaryTypes(String.class).hidden(true).paramLabel("OPERAND").build();
        spec.addPositional(operands);
        return new Built(spec, byKey, operands);
    }

    /**
     * Parses {@code args}.
     *
     * @throws ToolException USAGE for an unknown option, a missing value or a value given to a flag
     */
    public static CommandArgs parse(Syntax syntax, List<String> args) {
        Built built = spec(syntax);
        ParseResult result;
        try {
            result = new CommandLine(built.spec()).parseArgs(args.stream().filter(a -> a != null).toArray(String[]::new));
        } catch (ParameterException e) {
            throw ToolException.usage(syntax.command() + ": " + message(e));
        }
        Map<String, String> values = new LinkedHashMap<>();
        built.byKey().forEach((key, spec) -> {
            if (result.hasMatchedOption(spec)) {
                Object v = spec.getValue();
                values.put(key, v instanceof String s ? s : "");
            }
        });
        List<String> operands = result.hasMatchedPositional(0) ? built.operands().getValue() : List.of();
        return new CommandArgs(syntax.command(), values, List.copyOf(operands));
    }

    /** picocli's complaint in the words the tools have always used. */
    private static String message(ParameterException e) {
        if (e instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String arg = u.getUnmatched().getFirst();
            return arg.startsWith("-") ? "unknown option " + arg.replaceFirst("=.*", "") : "unexpected argument '" + arg + "'";
        }
        if (e instanceof MissingParameterException m && !m.getMissing().isEmpty()
                && m.getMissing().getFirst() instanceof OptionSpec o) {
            return "option " + o.shortestName() + " needs a value";
        }
        Matcher flag = FLAG_WITH_VALUE.matcher(e.getMessage());
        if (flag.find()) {
            return "option " + flag.group(1) + " takes no value";
        }
        return e.getMessage();
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
        return parseNumber(command, (option.length() == 1 ? "-" : "--") + option, text, min, max);
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
        String t = text.trim().toLowerCase(Locale.ROOT);
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

    /**
     * Parses {@code HOST[:PORT]} or {@code [IPv6]:PORT} (no port: 0) into an unresolved address.
     *
     * @param option the option the address came with, for messages ({@code "-h"})
     * @throws ToolException USAGE for an empty host or a port that is no number in [0, 65535]
     */
    public static InetSocketAddress hostAndPort(String command, String option, String text) {
        String host = text;
        int port = 0;
        int colon = text.lastIndexOf(':');
        if (colon >= 0 && text.indexOf(':') == colon) {
            host = text.substring(0, colon);
            port = (int) parseNumber(command, option + " port", text.substring(colon + 1), 0, 65_535);
        } else if (text.startsWith("[") && text.contains("]:")) {
            int close = text.indexOf("]:");
            host = text.substring(1, close);
            port = (int) parseNumber(command, option + " port", text.substring(close + 2), 0, 65_535);
        }
        if (host.isBlank()) {
            throw ToolException.usage(command + ": " + option + " wants HOST[:PORT], not '" + text + "'");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    /** The operands (arguments that are not options), in order. */
    public List<String> operands() {
        return operands;
    }
}
