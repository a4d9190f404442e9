package org.jdapl.registry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Writes the registry's conformance report, {@code target/conformance/registry.txt}: one line per
 * REG ID of CONFORMANCE.md, {@code REG_0N PASS|FAIL|SKIP reason}, from the tests whose names start
 * with the ID. IDs no test ran in this run are reported SKIP.
 */
public final class ConformanceReport implements TestWatcher {
    static final int REG_IDS = 7;
    private static final Pattern ID = Pattern.compile("^(REG_\\d\\d)_");
    private static final Map<String, String> RESULTS = new TreeMap<>();

    @Override
    public void testSuccessful(ExtensionContext context) {
        record(context, "PASS", context.getRequiredTestMethod().getName());
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        record(context, "FAIL", context.getRequiredTestMethod().getName() + ": " + firstLine(cause));
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        record(context, "SKIP", context.getRequiredTestMethod().getName() + " aborted: " + firstLine(cause));
    }

    @Override
    public void testDisabled(ExtensionContext context, Optional<String> reason) {
        record(context, "SKIP", context.getRequiredTestMethod().getName() + " disabled: " + reason.orElse(""));
    }

    private static String firstLine(Throwable t) {
        String message = String.valueOf(t.getMessage());
        int nl = message.indexOf('\n');
        return t.getClass().getSimpleName() + " " + (nl < 0 ? message : message.substring(0, nl));
    }

    private static void record(ExtensionContext context, String verdict, String reason) {
        Matcher m = ID.matcher(context.getRequiredTestMethod().getName());
        if (!m.find()) {
            return;
        }
        synchronized (RESULTS) {
            RESULTS.put(m.group(1), verdict + " " + reason);
            write();
        }
    }

    private static void write() {
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i <= REG_IDS; i++) {
            String id = String.format("REG_%02d", i);
            sb.append(id).append(' ').append(RESULTS.getOrDefault(id, "SKIP not run in this test run")).append('\n');
        }
        Path file = Path.of(System.getProperty("basedir", "."), "target", "conformance", "registry.txt");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, sb, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
