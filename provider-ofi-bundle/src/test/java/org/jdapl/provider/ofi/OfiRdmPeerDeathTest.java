package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Peer death over shm: the peer JVM ({@link ShmPeerMain}) accepts a connection and is killed
 * (SIGKILL); this side sees CONNECTION_BROKEN within the keepalive bound ({@link RdmIa#KEEPALIVE_BOUND_NANOS},
 * RDM_PROTOCOL.md) plus a few seconds for a loaded machine, the EP is DISCONNECTED, and each receive it
 * had posted completes FLUSHED exactly once. The killed peer's shm regions are removed by the test.
 */
class OfiRdmPeerDeathTest {
    @Test
    void DISC_17_aKilledShmPeerIsBrokenWithinTheKeepaliveBoundAndReceivesFlushOnce() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        int port = 30000 + (int) (ProcessHandle.current().pid() % 9000);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process peer = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), ShmPeerMain.class.getName(), Integer.toString(port))
                .redirectErrorStream(true).start();
        OfiProvider p = new OfiProvider();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
             InterfaceAdapter ia = p.open(new IaSpec("a", "shm", "", true, "t"), 8);
             Arena arena = Arena.ofShared()) {
            assertEquals("listening", line(out, peer));
            EventDispatcher conn = ia.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher dto = ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            ProtectionZone pz = ia.createPz();
            Endpoint ep = ia.createEp(pz, dto, dto, conn, null);
            LocalMemoryRegion lmr = ia.createLmr(pz, arena.allocate(128), EnumSet.allOf(MemPriv.class), VaType.VA);
            ep.postRecv(List.of(new LmrTriplet(lmr, 0, 64)), 1, null);
            ep.postRecv(List.of(new LmrTriplet(lmr, 64, 64)), 2, null);
            ep.connect(ia.query().attributes().address(), port, 10_000_000, new byte[0], org.jdapl.dat.Qos.BEST_EFFORT,
                    org.jdapl.dat.ConnectFlag.DEFAULT);
            DatEvent.Connection up = (DatEvent.Connection) conn.waitEvent(10_000_000, 1);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, up.number());
            assertTrue(line(out, peer).startsWith("accepted"));
            peer.destroyForcibly();
            assertTrue(peer.waitFor(10, TimeUnit.SECONDS), "the peer JVM did not die");
            long killed = System.nanoTime();
            long slack = 4_000_000_000L;
            DatEvent.Connection down = (DatEvent.Connection) conn.waitEvent((RdmIa.KEEPALIVE_BOUND_NANOS + slack) / 1000, 1);
            long ms = (System.nanoTime() - killed) / 1_000_000;
            assertEquals(EventNumber.CONNECTION_BROKEN, down.number(), "after " + ms + " ms");
            assertTrue(ms <= (RdmIa.KEEPALIVE_BOUND_NANOS + slack) / 1_000_000, ms + " ms");
            assertEquals(EpState.DISCONNECTED, ep.query().state());
            Set<Long> flushed = new HashSet<>();
            for (int i = 0; i < 2; i++) {
                DatEvent.DtoCompletion d = (DatEvent.DtoCompletion) dto.waitEvent(2_000_000, 1);
                assertEquals(DtoStatus.FLUSHED, d.status());
                assertTrue(flushed.add(d.cookie()), "receive " + d.cookie() + " completed twice");
            }
            assertEquals(Set.of(1L, 2L), flushed);
            assertTrue(dto.dequeue().isEmpty(), "a third completion");
        } finally {
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
            OfiShmRegions.remove(peer.pid()); // a killed process closes no endpoint
            p.deactivate();
        }
    }

    private static String line(BufferedReader out, Process peer) throws Exception {
        String l;
        while ((l = out.readLine()) != null) {
            if (l.equals("listening") || l.startsWith("accepted")) {
                return l;
            }
        }
        throw new AssertionError("the peer JVM ended (" + peer.waitFor() + ")");
    }
}
