package org.jdapl.tools;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.apache.felix.service.command.Function;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The application's command line: {@code jdapl dtest -B 10} runs the Gogo command
 * {@code dat:dtest} with the arguments as they are (no shell parsing) and returns its exit
 * status. A name without a scope is looked up in scope {@code dat} first, then in every scope, so
 * that the framework's own commands ({@code lb}, {@code scr:list}) work too. {@code providers}
 * runs the registry's {@code dat:source}, {@code dat:list} and {@code dat:providers} in turn:
 * the configuration in effect, every IA with its provider, state, thread safety and source, and
 * the providers present.
 *
 * <p>The launcher, outside the framework, finds this service by its {@link #PROPERTY} property
 * and calls it through a JDK type ({@link ToIntFunction}), so that it needs none of ours.
 */
@Component(service = ToIntFunction.class, property = CommandLineRunner.PROPERTY + "=true")
public final class CommandLineRunner implements ToIntFunction<String[]> {
    /** Command-line names that stand for a sequence of registry commands. */
    static final Map<String, List<String>> ALIASES =
            Map.of("providers", List.of("dat:source", "dat:list", "dat:providers"));

    /** The service property the launcher looks for. */
    public static final String PROPERTY = "jdapl.command.line";

    private static final Logger LOG = LoggerFactory.getLogger(CommandLineRunner.class);
    private static final long COMMANDS_WAIT_MILLIS = 10_000;

    private final CommandProcessor processor;
    private volatile ToolCommands commands;

    /** A runner executing commands in sessions of {@code processor}. */
    @Activate
    public CommandLineRunner(@Reference CommandProcessor processor) {
        this.processor = processor;
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    void bindCommands(ToolCommands bound) {
        this.commands = bound;
    }

    void unbindCommands(ToolCommands unbound) {
        if (this.commands == unbound) {
            this.commands = null;
        }
    }

    /**
     * Runs {@code args[0]} with the other arguments; prints errors on standard error.
     *
     * @return 0 on success, {@link ToolException#USAGE} for an unknown command or bad arguments,
     *         {@link ToolException#FAILURE} (or the command's status) for a failure
     */
    @Override
    public int applyAsInt(String[] args) {
        if (args.length == 0) {
            System.err.println("jdapl: no command given");
            return ToolException.USAGE;
        }
        String name = args[0];
        List<Object> arguments = new ArrayList<>(Arrays.asList(args).subList(1, args.length));
        CommandSession session = processor.createSession(System.in, System.out, System.err);
        try {
            List<String> names = ALIASES.getOrDefault(name, List.of(name));
            for (String each : names) {
                int status = execute(session, each, arguments, name);
                if (status != 0) {
                    return status;
                }
            }
            return 0;
        } finally {
            session.close();
        }
    }

    private int execute(CommandSession session, String name, List<Object> arguments, String asked) {
        if (!arguments.isEmpty() && !asked.equals(name)) {
            System.err.println("jdapl: " + asked + " takes no arguments");
            return ToolException.USAGE;
        }
        try {
            Function function = lookup(session, name);
            if (function == null) {
                System.err.println("jdapl: unknown command '" + name + "'" + (commands == null
                        ? " (the dat commands are not registered: no DatRegistry service; is the registry bundle active?)"
                        : "; commands: " + String.join(", ", ToolCommands.NAMES) + " (and the shell's, e.g. lb)"));
                return ToolException.USAGE;
            }
            Object result = function.execute(session, arguments);
            if (result != null) {
                String text = session.format(result, Converter.INSPECT).toString();
                System.out.print(text.endsWith("\n") ? text : text + "\n");
            }
            System.out.flush();
            return 0;
        } catch (Exception e) {
            return failed(name, e);
        }
    }

    private Function lookup(CommandSession session, String name) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COMMANDS_WAIT_MILLIS);
        while (true) {
            Function found = find(session, name);
            if (found != null || commands != null || System.nanoTime() > deadline) {
                return found;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    private static Function find(CommandSession session, String name) {
        List<String> candidates = name.contains(":") ? List.of(name) : List.of("dat:" + name, "*:" + name);
        for (String candidate : candidates) {
            if (session.get(candidate) instanceof Function function) {
                return function;
            }
        }
        return null;
    }

    private static int failed(String name, Throwable e) {
        Throwable t = e;
        while ((t instanceof InvocationTargetException || t instanceof RuntimeException && !(t instanceof ToolException))
                && t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        System.out.flush();
        if (t instanceof ToolException tool) {
            String message = tool.getMessage();
            System.err.println(message.startsWith(name + ":") ? message : name + ": " + message);
            LOG.debug("{} failed", name, tool);
            return tool.status();
        }
        System.err.println(name + ": " + t);
        LOG.debug("{} failed", name, t);
        return ToolException.FAILURE;
    }
}
