package org.jdapl.tools.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile sessions against one IA of the emulated tcp fabric (the soak responder: every connection
 * accepted with a guarded region exposed for RDMA) while two soak streams keep using the same IA.
 * The victim must drop each hostile connection without harm to the others: the streams end with
 * every DTO completed once and every byte right, no canary around any region changes, and the
 * victim's memory, threads and descriptors stay bounded and return to what they were.
 *
 * <p>{@code jdapl.hostile.sessions} sets the number of sessions (default 10000).
 */
class HostileSessionsTest {
    @TempDir
    Path dir;

    private static long direct() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        return 0;
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.HOURS)
    void hostileSessionsHarmNeitherTheVictimsOtherConnectionsNorAnyByteOutsideARegion() throws Exception {
        long total = Long.getLong("jdapl.hostile.sessions", 10_000);
        Path conf = dir.resolve("dat.conf");
        Files.writeString(conf, "victim u2.0 threadsafe default emu emu.1.0 \"tcp 127.0.0.1:0\" \"\"\n");
        String previous = System.setProperty("dat.conf", conf.toString());
        DatRegistry registry = DatRegistry.standalone();
        if (previous == null) {
            System.clearProperty("dat.conf");
        } else {
            System.setProperty("dat.conf", previous);
        }
        SoakOptions options = SoakOptions.parse(List.of("-D", "victim", "-c", "2", "-w", "4", "-m", "4k", "-f", "none"));
        // Warm up what the JDK opens once (SecureRandom, NSS), then take the baseline.
        new Responder(registry, "victim", 1, 1, 64).close();
        Resources before = Resources.now();
        Responder victim = new Responder(registry, "victim", 0x4855, options.window(), options.maxSize());
        Ledger ledger = new Ledger();
        InterfaceAdapter ia = registry.open("victim", 16);
        ProtectionZone pz = ia.createPz();
        AtomicBoolean hostileDone = new AtomicBoolean();
        List<Thread> streams = new ArrayList<>();
        for (int i = 0; i < options.connections(); i++) {
            Stream s = new Stream(i, ia, pz, ledger, options, victim, () -> !hostileDone.get());
            streams.add(Thread.ofPlatform().name("legit-" + i).start(s));
        }
        HostilePeer peer = new HostilePeer((InetSocketAddress) victim.address(), victim.connQual());
        AtomicLong next = new AtomicLong();
        AtomicLong maxDirect = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        List<Thread> attackers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            attackers.add(Thread.ofPlatform().name("hostile-" + t).start(() -> {
                long n;
                while ((n = next.getAndIncrement()) < total && failure.get() == null) {
                    try {
                        peer.session(n);
                    } catch (Exception e) {
                        failure.compareAndSet(null, new AssertionError("session " + n + ": " + e, e));
                    }
                    if (n % 256 == 0) {
                        maxDirect.accumulateAndGet(direct(), Math::max);
                    }
                }
            }));
        }
        for (Thread t : attackers) {
            t.join(TimeUnit.HOURS.toMillis(2));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        hostileDone.set(true);
        for (Thread t : streams) {
            t.join(120_000);
        }
        ia.close();
        victim.close();
        Resources after = Resources.now();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((after.fds() > before.fds() || after.threads() > before.threads()) && System.nanoTime() < deadline) {
            Thread.sleep(250); // connections in their closing linger
            after = Resources.now();
        }
        StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                "hostile sessions: %d in %.1f s (%.0f/s), %d handshakes completed%n", total, seconds, total / seconds,
                peer.accepted.get(0)));
        for (HostilePeer.Scenario sc : HostilePeer.Scenario.values()) {
            report.append(String.format(Locale.ROOT, "  %-24s %d%n", sc.name().toLowerCase(Locale.ROOT),
                    peer.sessions.get(sc.ordinal())));
        }
        report.append(String.format(Locale.ROOT, "victim connections %d, canaries damaged %d%n",
                victim.connections.sum(), victim.canaryDamaged.sum()));
        report.append(String.format(Locale.ROOT, "legit streams: %d DTOs posted, %d OK, %d flushed, %d twice, "
                        + "%d never, %d corrupt, %d canaries damaged, %d stalls, %d bytes verified%n",
                ledger.posted.sum(), ledger.completedOk.sum(), ledger.flushed.sum(), ledger.completedTwice.sum(),
                ledger.neverCompleted.sum() + ledger.outstanding(), ledger.corrupt.sum(), ledger.canaryDamaged.sum(),
                ledger.stalls.sum(), ledger.bytesVerified.sum()));
        report.append(String.format(Locale.ROOT, "direct buffers: %d before, %d at most during, %d after; heap %d -> %d;"
                        + " threads %d -> %d; fds %d -> %d%n", before.directBytes(), maxDirect.get(),
                after.directBytes(), before.heapBytes(), after.heapBytes(), before.threads(), after.threads(),
                before.fds(), after.fds()));
        Path out = Path.of("target", "soak", "hostile.txt");
        Files.createDirectories(out.getParent());
        Files.writeString(out, report);
        System.out.print(report);
        if (failure.get() != null) {
            throw new AssertionError(failure.get().getMessage() + "\n" + report, failure.get());
        }
        assertEquals(total, peer.accepted.get(0), report.toString());
        assertEquals(0, victim.canaryDamaged.sum(), report.toString());
        assertEquals(0, ledger.completedTwice.sum(), report.toString());
        assertEquals(0, ledger.neverCompleted.sum() + ledger.outstanding(), report.toString());
        assertEquals(0, ledger.corrupt.sum() + ledger.canaryDamaged.sum() + ledger.stalls.sum(), report.toString());
        assertEquals(0, ledger.reconnections.sum(), "a legit connection was dropped: " + report);
        assertTrue(ledger.bytesVerified.sum() > 0, report.toString());
        // 128 KiB of buffers per connection, for connections open or in their closing linger (2 s)
        assertTrue(maxDirect.get() < 256L << 20, "direct memory grew to " + maxDirect.get() + "\n" + report);
        assertTrue(after.directBytes() <= before.directBytes() + (1 << 20), report.toString());
        assertTrue(after.threads() <= before.threads(), report.toString());
        assertTrue(after.fds() <= before.fds(), report.toString());
    }
}
