package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * OBJ_11 on the ofi provider (tcp on lo): {@value #EVD_WAITERS} virtual threads blocked in
 * {@code waitEvent} (one EVD in 16 with a CQ) and {@value #CNO_WAITERS} in {@code waitCno} on a
 * scheduler of 2 carriers, in a JVM of their own ({@link OfiVirtualWaitersMain}): no
 * {@code jdk.VirtualThreadPinned} event, each woken waiter returns its own event, and closing the IA
 * releases every other waiter with DAT_ABORT (CNO waiters with INVALID_STATE_CNO_DEAD).
 */
class OfiVirtualThreadWaitTest {
    static final int EVD_WAITERS = 400;
    static final int CNO_WAITERS = 8;

    @TempDir
    Path dir;

    @Test
    void OBJ_11_blockedWaitsUnmountAndTheIasCloseReleasesThem() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-Djdk.virtualThreadScheduler.parallelism=2",
                "-Djdk.virtualThreadScheduler.maxPoolSize=2", "-cp", System.getProperty("java.class.path"),
                OfiVirtualWaitersMain.class.getName(), Integer.toString(EVD_WAITERS), Integer.toString(CNO_WAITERS)));
        Path out = dir.resolve("out.txt");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            if (!p.waitFor(3, TimeUnit.MINUTES)) {
                fail("the JVM did not end within 3 minutes:\n" + Files.readString(out, StandardCharsets.UTF_8));
            }
        } finally {
            p.destroyForcibly();
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), text);
        assertEquals(0, count(text, "pinned"), text);
        assertEquals(EVD_WAITERS / 2, count(text, "woken"), text);
        assertEquals(EVD_WAITERS / 2 + CNO_WAITERS, count(text, "released"), text);
        assertEquals(0, count(text, "wrong"), text);
    }

    private static long count(String out, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + " (\\d+)$").matcher(out);
        if (!m.find()) {
            fail("no line '" + name + " N' in:\n" + out);
        }
        return Long.parseLong(m.group(1));
    }
}
