package org.jdapl.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.wiring.FrameworkWiring;
import org.osgi.util.tracker.ServiceTracker;

/**
 * The jdapl application: starts Apache Felix with the bundles of {@code conf/bundles.list}, checks
 * that every one resolved and started, then either runs one command and exits with its status
 * ({@code jdapl dtest -B 10}) or opens the interactive Gogo shell ({@code jdapl}).
 *
 * <p>Each run has its own framework storage in a temporary directory, removed at exit, so that
 * several runs (a dtest server and its client) may run side by side.
 */
public final class Launcher {
    /** The exit status when the application itself cannot start. */
    static final int STARTUP_FAILED = 3;
    static final int USAGE = 2;
    static final int FAILURE = 1;

    private static final long WAIT_SECONDS = 30;
    /** What must be registered before the interactive shell reads its first line. */
    private static final List<String> SHELL_NEEDS = List.of(
            "(&(" + Constants.OBJECTCLASS + "=" + ToIntFunction.class.getName() + ")(jdapl.command.line=true))",
            "(&(osgi.command.scope=dat)(osgi.command.function=dtest))",
            "(&(osgi.command.scope=dat)(osgi.command.function=dapltest))",
            "(&(osgi.command.scope=dat)(osgi.command.function=list))");

    private final PrintStream err;
    private Framework framework;
    private Path storage;

    private Launcher(PrintStream err) {
        this.err = err;
    }

    /** Runs the application and exits the JVM with its status. */
    public static void main(String[] args) {
        int status = new Launcher(System.err).run(args);
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }

    int run(String[] args) {
        LaunchOptions options;
        try {
            options = LaunchOptions.parse(args);
        } catch (LaunchOptions.UsageException e) {
            err.println("jdapl: " + e.getMessage());
            err.println(LaunchOptions.USAGE);
            return USAGE;
        }
        if (options.help()) {
            System.out.println(LaunchOptions.USAGE);
            return 0;
        }
        Thread hook = Thread.ofPlatform().unstarted(this::shutdown);
        try {
            configureLogging(options);
            Path home = home();
            List<BundleList.Entry> bundles = BundleList.read(home.resolve("conf/bundles.list"), home.resolve("bundle"));
            storage = Files.createTempDirectory("jdapl-felix-");
            Runtime.getRuntime().addShutdownHook(hook);
            if (!start(bundles, options)) {
                return STARTUP_FAILED;
            }
            return options.interactive() ? shell() : command(options.command());
        } catch (IOException | BundleException | RuntimeException e) {
            err.println("jdapl: the application cannot start: " + e);
            return STARTUP_FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("jdapl: interrupted");
            return FAILURE;
        } finally {
            shutdown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down; the hook runs shutdown() too
            }
        }
    }

    /** The application directory: the parent of {@code lib/} holding this jar. */
    private static Path home() throws IOException {
        String override = System.getProperty("jdapl.home");
        if (override != null) {
            return Path.of(override);
        }
        try {
            Path jar = Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return jar.getParent().getParent();
        } catch (URISyntaxException e) {
            throw new IOException("cannot tell where the launcher jar is", e);
        }
    }

    /**
     * SLF4J (slf4j-simple in the framework) reads its level and file from system properties; the
     * framework's and java.util.logging's messages (jline, SPI Fly) go to standard error at the
     * same level.
     */
    private void configureLogging(LaunchOptions options) throws IOException {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", options.logLevel());
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd HH:mm:ss.SSS");
        System.setProperty("org.slf4j.simpleLogger.showShortLogName", "true");
        if (options.logFile() != null) {
            Path file = options.logFile().toAbsolutePath();
            // Fail here with a clear message rather than have slf4j-simple fall back silently.
            Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE).close();
            System.setProperty("org.slf4j.simpleLogger.logFile", file.toString());
        } else {
            System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        }
        options.properties().forEach(System::setProperty);
        Level level = switch (options.logLevel()) {
            case "off" -> Level.OFF;
            case "error" -> Level.SEVERE;
            case "warn" -> Level.WARNING;
            case "info" -> Level.INFO;
            case "debug" -> Level.FINE;
            default -> Level.FINEST;
        };
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.setLevel(level);
        for (Handler handler : root.getHandlers()) {
            handler.setLevel(level);
        }
    }

    private Map<String, Object> frameworkProperties(LaunchOptions options, int topLevel) {
        Map<String, Object> p = new HashMap<>();
        p.put(Constants.FRAMEWORK_STORAGE, storage.toString());
        p.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
        p.put(Constants.FRAMEWORK_BEGINNING_STARTLEVEL, Integer.toString(topLevel));
        // Felix 7.0 knows the Java versions up to its release; the bundles require JavaSE 25.
        p.put(Constants.FRAMEWORK_SYSTEMCAPABILITIES_EXTRA,
                "osgi.ee; osgi.ee=\"JavaSE\"; version:List<Version>=\"" + javaSeVersions() + "\"");
        // jline reaches sun.misc.Signal for the shell's signal handling.
        p.put(Constants.FRAMEWORK_BOOTDELEGATION, "sun.misc");
        p.put("felix.log.logger", new FrameworkLog(err));
        p.put("felix.log.level", switch (options.logLevel()) {
            case "off" -> "0";
            case "error" -> "1";
            case "warn" -> "2";
            case "info" -> "3";
            default -> "4";
        });
        options.properties().forEach(p::put);
        return p;
    }

    static String javaSeVersions() {
        StringBuilder versions = new StringBuilder("1.0,1.1,1.2,1.3,1.4,1.5,1.6,1.7,1.8");
        for (int v = 9; v <= Runtime.version().feature(); v++) {
            versions.append(',').append(v);
        }
        return versions.toString();
    }

    /**
     * Installs every bundle, starts the framework up to the highest start level, and checks that
     * every bundle resolved and that every bundle to start is ACTIVE.
     *
     * @return false (after saying why) if a bundle did not resolve or start
     */
    private boolean start(List<BundleList.Entry> entries, LaunchOptions options)
            throws BundleException, InterruptedException {
        int topLevel = entries.stream().mapToInt(BundleList.Entry::startLevel).max().orElse(1);
        framework = new FrameworkFactory().newFramework(frameworkProperties(options, topLevel));
        framework.init();
        List<Bundle> installed = new ArrayList<>();
        List<Bundle> toStart = new ArrayList<>();
        List<Bundle> shell = new ArrayList<>();
        for (BundleList.Entry entry : entries) {
            Bundle bundle = framework.getBundleContext().installBundle("reference:" + entry.jar().toUri());
            bundle.adapt(BundleStartLevel.class).setStartLevel(entry.startLevel());
            installed.add(bundle);
            if (!entry.shellOnly()) {
                toStart.add(bundle);
            } else if (options.interactive()) {
                shell.add(bundle);
            }
        }
        List<String> problems = new ArrayList<>();
        for (Bundle bundle : toStart) {
            try {
                bundle.start();
            } catch (BundleException e) {
                problems.add(bundle.getSymbolicName() + ": " + e.getMessage());
            }
        }
        framework.start();
        framework.adapt(FrameworkWiring.class).resolveBundles(installed);
        for (Bundle bundle : installed) {
            boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            if ((bundle.getState() & (Bundle.INSTALLED | Bundle.UNINSTALLED)) != 0) {
                problems.add(bundle.getSymbolicName() + " did not resolve: " + resolutionProblem(bundle));
            } else if (toStart.contains(bundle) && !fragment && bundle.getState() != Bundle.ACTIVE) {
                problems.add(bundle.getSymbolicName() + " is not active (state " + bundle.getState() + ")");
            }
        }
        if (problems.isEmpty() && !shell.isEmpty()) {
            startShell(shell, problems);
        }
        if (!problems.isEmpty()) {
            err.println("jdapl: the application cannot start:");
            problems.stream().distinct().forEach(p -> err.println("  " + p));
            return false;
        }
        return true;
    }

    /**
     * Starts the shell bundles once the dat commands are registered: the shell reads its input as
     * soon as it starts, and Declarative Services registers the commands asynchronously.
     */
    private void startShell(List<Bundle> shell, List<String> problems) throws InterruptedException {
        for (String filter : SHELL_NEEDS) {
            if (awaitService(filter) == null) {
                problems.add("no service " + filter + " within " + WAIT_SECONDS + " s");
                return;
            }
        }
        for (Bundle bundle : shell) {
            try {
                bundle.start();
            } catch (BundleException e) {
                problems.add(bundle.getSymbolicName() + ": " + e.getMessage());
            }
        }
    }

    /** The service matching {@code filter}, waiting up to {@link #WAIT_SECONDS}; null if none came. */
    private Object awaitService(String filter) throws InterruptedException {
        var context = framework.getBundleContext();
        ServiceTracker<Object, Object> tracker;
        try {
            tracker = new ServiceTracker<>(context, context.createFilter(filter), null);
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        tracker.open();
        try {
            return tracker.waitForService(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        } finally {
            tracker.close();
        }
    }

    /** The framework's reason for a bundle that did not resolve (a transient start says it). */
    private static String resolutionProblem(Bundle bundle) {
        try {
            bundle.start(Bundle.START_TRANSIENT);
            bundle.stop(Bundle.STOP_TRANSIENT);
            return "unknown reason";
        } catch (BundleException e) {
            return e.getMessage();
        }
    }

    /** Runs one command through the tools bundle's command-line service. */
    private int command(List<String> command) throws InterruptedException {
        var context = framework.getBundleContext();
        ServiceTracker<Object, Object> tracker;
        try {
            tracker = new ServiceTracker<>(context, context.createFilter(
                    "(&(" + Constants.OBJECTCLASS + "=" + ToIntFunction.class.getName() + ")(jdapl.command.line=true))"),
                    null);
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        tracker.open();
        try {
            Object service = tracker.waitForService(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            if (!(service instanceof ToIntFunction<?> runner)) {
                err.println("jdapl: the command line service of org.jdapl.tools did not appear within "
                        + WAIT_SECONDS + " s");
                return STARTUP_FAILED;
            }
            @SuppressWarnings("unchecked")
            ToIntFunction<String[]> typed = (ToIntFunction<String[]>) runner;
            return typed.applyAsInt(command.toArray(String[]::new));
        } finally {
            tracker.close();
        }
    }

    /** Waits until the shell stops the framework (exit, stop 0, end of input). */
    private int shell() throws InterruptedException {
        FrameworkEvent event = framework.waitForStop(0);
        return event.getType() == FrameworkEvent.ERROR ? FAILURE : 0;
    }

    /** Stops the framework (bounded) and removes its storage; safe to call twice. */
    private synchronized void shutdown() {
        Framework running = framework;
        framework = null;
        if (running != null) {
            try {
                running.stop();
                running.waitForStop(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            } catch (BundleException | InterruptedException | RuntimeException e) {
                err.println("jdapl: stopping the framework: " + e);
            }
        }
        Path dir = storage;
        storage = null;
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                err.println("jdapl: cannot remove " + dir + ": " + e);
            }
        }
    }
}
