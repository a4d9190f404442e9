package org.jdapl.launcher;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The assembled application (target/jdapl, named by the system property {@code jdapl.app}) started
 * as a process, as users start it: {@code java -jar lib/jdapl-launcher.jar ...}. Every wait is
 * bounded; a process that outlives its bound is killed and the test fails.
 */
final class Application {
    /** What a finished run printed and returned. */
    record Result(int status, String out, String err) {
        @Override
        public String toString() {
            return "status " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** A started process whose output goes to files. */
    static final class Running implements AutoCloseable {
        final Process process;
        final Path out;
        final Path err;

        Running(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        String out() throws IOException {
            return Files.readString(out, StandardCharsets.UTF_8);
        }

        String err() throws IOException {
            return Files.readString(err, StandardCharsets.UTF_8);
        }

        /** Waits for the end; kills the process and fails if it does not end in time. */
        Result await(Duration timeout) throws IOException, InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                close();
                fail("the application did not end within " + timeout + "\n--- stdout\n" + out() + "--- stderr\n" + err());
            }
            return new Result(process.exitValue(), out(), err());
        }

        /** Kills the process (and its children) if it still runs. */
        @Override
        public void close() throws InterruptedException {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** The name of the empty dat.conf {@link #start} hands the application. */
    static final String EMPTY_DAT_CONF = "empty-dat.conf";

    /** The empty dat.conf in {@code work}, written if missing. */
    static Path emptyDatConf(Path work) throws IOException {
        Path conf = work.resolve(EMPTY_DAT_CONF);
        if (!Files.exists(conf)) {
            Files.writeString(conf, "# no entries: the providers' default IAs only\n");
        }
        return conf;
    }

    static Path home() {
        String app = System.getProperty("jdapl.app");
        if (app == null) {
            throw new IllegalStateException("system property jdapl.app is not set (run through Maven)");
        }
        return Path.of(app);
    }

    static List<String> javaCommand() {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        // As ./jdapl runs it: Felix works without sun.misc.Unsafe (ApplicationIT.noSunMiscUnsafeWarningOnJava25).
        command.add("--sun-misc-unsafe-memory-access=deny");
        command.add("-Xmx512m");
        command.add("-jar");
        command.add(home().resolve("lib/jdapl-launcher.jar").toString());
        return command;
    }

    /**
     * Starts {@code command} (a full command line) with extra environment variables; stdin is empty.
     * Unless {@code environment} names another, the registry reads an empty dat.conf of the test's
     * ({@link #EMPTY_DAT_CONF} in {@code work}, through DAT_OVERRIDE), never the machine's
     * /etc/dat.conf or DAT_OVERRIDE: the IAs are the providers' defaults wherever the test runs.
     * {@link #AS_TYPED} (DAT_OVERRIDE mapped to an empty string) runs it as a user types it instead,
     * with no DAT_OVERRIDE at all: for README samples of a host without /etc/dat.conf.
     */
    /** The environment entry that leaves DAT_OVERRIDE unset, as in a user's shell. */
    static final Map<String, String> AS_TYPED = Map.of("DAT_OVERRIDE", "");

    static Running start(List<String> command, Map<String, String> environment, Path work, String stdin)
            throws IOException {
        Files.createDirectories(work);
        Path out = Files.createTempFile(work, "out-", ".txt");
        Path err = Files.createTempFile(work, "err-", ".txt");
        Path in = Files.createTempFile(work, "in-", ".txt");
        Files.writeString(in, stdin == null ? "" : stdin);
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(in.toFile());
        builder.environment().put("DAT_OVERRIDE", emptyDatConf(work).toString());
        builder.environment().putAll(environment);
        if ("".equals(builder.environment().get("DAT_OVERRIDE"))) {
            builder.environment().remove("DAT_OVERRIDE");
        }
        return new Running(builder.start(), out, err);
    }

    /** Runs the application with {@code args} and waits (bounded) for its end. */
    static Result run(Path work, Map<String, String> environment, Duration timeout, String... args)
            throws IOException, InterruptedException {
        List<String> command = javaCommand();
        command.addAll(List.of(args));
        try (Running running = start(command, environment, work, null)) {
            return running.await(timeout);
        }
    }

    private Application() {
    }
}
