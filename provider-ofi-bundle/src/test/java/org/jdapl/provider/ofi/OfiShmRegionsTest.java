package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The shm regions ({@code /dev/shm/jdapl_<pid>_<n>}, 16 MiB each) of a shm IA's endpoints go with the
 * IA: its close (with a PSP, the hub and a connected EP still live) leaves none of them, and neither
 * does a JVM that exits with the IA open. The same for a connection's credit word files
 * ({@code /dev/shm/jdapl_credits_<pid>_<n>}, {@link SharedCreditWords}), and a gone process's are swept.
 */
class OfiShmRegionsTest {
    @Test
    void OBJ_01_closingAShmIaWithLiveObjectsRemovesItsRegions() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        long pid = ProcessHandle.current().pid();
        Set<String> before = regions(pid);
        int port = 21000 + (int) (pid % 9000);
        OfiProvider p = new OfiProvider();
        InterfaceAdapter a = p.open(new IaSpec("a", "shm", "", true, "t"), 8);
        InterfaceAdapter b = p.open(new IaSpec("b", "shm", "", true, "t"), 8);
        try {
            EventDispatcher aConn = a.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher aDto = a.createEvd(8, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher bConn = b.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bDto = b.createEvd(8, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            b.createPsp(port, bCr, PspFlag.CONSUMER);
            Endpoint ea = a.createEp(a.createPz(), aDto, aDto, aConn, null);
            Endpoint eb = b.createEp(b.createPz(), bDto, bDto, bConn, null);
            ea.connect(b.query().attributes().address(), port, 5_000_000, new byte[0], org.jdapl.dat.Qos.BEST_EFFORT,
                    org.jdapl.dat.ConnectFlag.DEFAULT);
            ((DatEvent.ConnectionRequest) bCr.waitEvent(5_000_000, 1)).request().accept(eb, new byte[0]);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) aConn.waitEvent(5_000_000, 1)).number());
            Set<String> open = regions(pid);
            open.removeAll(before);
            assertTrue(open.size() >= 5, "the IAs' regions: " + open);
            assertEquals(2, creditFiles(pid).size(), "the connection's credit words: " + creditFiles(pid));
        } finally {
            a.close();
            b.close();
        }
        Set<String> left = regions(pid);
        left.removeAll(before);
        assertTrue(left.isEmpty(), "shm regions left after the IAs' close: " + left);
        assertTrue(creditFiles(pid).isEmpty(), "credit word files left after the IAs' close: " + creditFiles(pid));
    }

    /** A killed JVM's credit word files are removed by a later process's sweep; a live process's stay. */
    @Test
    void OBJ_01_theCreditWordsOfAGoneProcessAreSwept() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        assertTrue(gone.waitFor(30, TimeUnit.SECONDS));
        Path dead = Path.of("/dev/shm", "jdapl_credits_" + gone.pid() + "_1");
        Path live = Path.of("/dev/shm", "jdapl_credits_" + ProcessHandle.current().pid() + "_999999");
        Files.write(dead, new byte[64]);
        Files.write(live, new byte[64]);
        try {
            SharedCreditWords.sweep();
            assertFalse(Files.exists(dead), "the file of the gone process " + gone.pid());
            assertTrue(Files.exists(live), "the file of this live process");
        } finally {
            Files.deleteIfExists(dead);
            Files.deleteIfExists(live);
        }
    }

    /** The names of process {@code pid}'s credit word files ({@link SharedCreditWords}). */
    static Set<String> creditFiles(long pid) throws IOException {
        Set<String> s = new TreeSet<>();
        try (Stream<Path> l = Files.list(Path.of("/dev/shm"))) {
            l.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("jdapl_credits_" + pid + "_")).forEach(s::add);
        }
        return s;
    }

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
