package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The shm regions ({@code /dev/shm/jdapl_<pid>_<n>}, 16 MiB each) of a shm IA's endpoints go with the
 * IA: a JVM that exits with the IA open leaves none of them.
 */
class OfiShmRegionsTest {
    @Test
    void OBJ_01_aJvmExitingWithAShmIaOpenLeavesNoRegion() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED", "-Xmx128m",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), ShmExitMain.class.getName())
                .redirectErrorStream(true);
        Process child = pb.start();
        String out;
        try {
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the JVM did not end");
            out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } finally {
            child.destroyForcibly();
        }
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.contains("open jdapl_" + child.pid() + "_"), out);
        Set<String> left = regions(child.pid());
        OfiShmRegions.remove(child.pid());
        assertTrue(left.isEmpty(), "shm regions left by the exited JVM " + child.pid() + ": " + left);
    }

    /** The names of process {@code pid}'s shm regions in {@code /dev/shm}. */
    static Set<String> regions(long pid) throws IOException {
        Set<String> s = new TreeSet<>();
        try (Stream<Path> l = Files.list(Path.of("/dev/shm"))) {
            l.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("jdapl_" + pid + "_")).forEach(s::add);
        }
        return s;
    }
}
