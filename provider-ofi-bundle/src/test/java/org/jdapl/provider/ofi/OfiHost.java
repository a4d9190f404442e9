package org.jdapl.provider.ofi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the tests need of the machine: libfabric installed by scripts/ofi/install-host-packages.sh
 * (apt-get, as root) when it is missing, and the reason when it cannot be.
 */
public final class OfiHost {
    private OfiHost() {
    }

    private static String reason;
    private static boolean tried;

    /**
     * Installs what {@code what} of the install script names (runtime, headers, bench) if missing;
     * returns null when it is there, else why not.
     */
    public static synchronized String ensure(String what) {
        if (tried && reason == null && what.equals("runtime")) {
            return null;
        }
        Path script = repositoryRoot().resolve("scripts/ofi/install-host-packages.sh");
        if (!Files.isExecutable(script)) {
            return "no " + script + " to install libfabric";
        }
        try {
            Result r = run(List.of("bash", script.toString(), what), 900);
            tried = true;
            reason = r.exit() == 0 ? null
                    : "libfabric (" + what + ") is missing and could not be installed: " + r.output().strip();
        } catch (IOException | InterruptedException e) {
            reason = "cannot run " + script + ": " + e;
        }
        return reason;
    }

    /** The checkout's root (the directory with scripts/ofi). */
    public static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("scripts/ofi"))) {
            p = p.getParent();
        }
        return p == null ? Path.of("..").toAbsolutePath() : p;
    }

    /** A command's exit status and output. */
    public record Result(int exit, String output) {
    }

    /** Runs a command, bounded in time. */
    public static Result run(List<String> cmd, int seconds) throws IOException, InterruptedException {
        Path out = Files.createTempFile("ofi", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IOException(cmd + " did not finish within " + seconds + " s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
