package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * libfabric 1.17's shm replaces the process's SIGSEGV, SIGBUS, SIGTERM and SIGINT handlers at its first
 * endpoint with one that unlinks every shm region of the process at the first such signal; a JVM takes
 * SIGSEGV in normal operation, so without the provider's care ({@code FiSignals}) a PSP's region
 * vanished from {@code /dev/shm} and no other process could reach it (a connection request never
 * arrived). A JVM of its own ({@link ShmSignalsMain}), so that its first shm endpoint is the PSP's.
 */
class OfiShmSignalsTest {
    @Test
    void CONN_03_aShmPspKeepsTheJvmSignalHandlersAndItsRegion() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        OfiHost.Result r = OfiHost.run(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), ShmSignalsMain.class.getName()), 60);
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("handlers: kept"), r.output());
        assertTrue(r.output().contains("region: present"), r.output());
    }
}
