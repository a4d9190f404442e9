package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Open/close cycles of connected tcp IAs leave no thread, socket, object or buffer behind. */
@Timeout(120)
class TcpLeakTest {

    @Test
    void connectedTcpIasCloseTheirThreadsAndSockets() throws Exception {
        int threadsBefore = emuThreads();
        long fdsBefore = openFds();
        EmuProvider provider = null;
        for (int i = 0; i < 60; i++) {
            try (Fixture f = Fixture.tcp()) {
                provider = f.provider;
                Endpoint[] eps = connectAndSendOne(f);
                if (i % 2 == 0) {
                    eps[0].free();
                }
            }
            Map<HandleType, Integer> left = provider.openObjects();
            assertTrue(left.values().stream().allMatch(n -> n == 0), "objects left after cycle " + i + ": " + left);
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (emuThreads() > threadsBefore && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(emuThreads() <= threadsBefore, "threads before " + threadsBefore + ", after " + emuThreads());
        if (fdsBefore >= 0) {
            long fds = openFds();
            assertTrue(fds <= fdsBefore + 16, "file descriptors before " + fdsBefore + ", after " + fds);
        }
    }

    /**
     * A consumer may keep the handles of freed EPs and closed IAs: they must not keep the connections'
     * socket buffers (64 KiB in, 64 KiB out, direct memory) reachable. The buffers went with the
     * connection's selection key, which a closed IA's selector kept, and with the EP's link.
     */
    @Test
    void freedEpsAndClosedIasStillHeldKeepNoConnectionBuffers() throws Exception {
        long before = directBytesSettled(Long.MAX_VALUE);
        List<Object> held = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            try (Fixture f = Fixture.tcp()) {
                Endpoint[] eps = connectAndSendOne(f);
                eps[0].free();
                held.addAll(List.of(eps[0], eps[1], f.a.ia, f.b.ia));
            }
        }
        long after = directBytesSettled(before);
        assertTrue(after <= before, "direct memory before " + before + " bytes, after " + after + " bytes with "
                + held.size() + " freed or closed handles held");
    }

    /** Connects the fixture's two IAs and moves one 4 KiB send across: both completions are SUCCESS. */
    private static Endpoint[] connectAndSendOne(Fixture f) {
        Endpoint[] eps = f.connect();
        LocalMemoryRegion src = f.a.lmr(f.memory(4096));
        LocalMemoryRegion dst = f.b.lmr(f.memory(4096));
        eps[1].postRecv(iov(dst, 0, 4096), 1, none());
        eps[0].postSend(iov(src, 0, 4096), 2, none());
        assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
        assertEquals(DtoStatus.SUCCESS, f.b.nextDto().status());
        return eps;
    }

    /** Direct memory in use once collections have run, waiting up to 5 s for it to fall to {@code target}. */
    private static long directBytesSettled(long target) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        long used;
        do {
            System.gc();
            Thread.sleep(50);
            used = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                    .filter(p -> p.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
        } while (used > target && System.nanoTime() < deadline);
        return used;
    }

    private static int emuThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("jdapl-emu-") && t.isAlive()).count();
    }

    private static long openFds() {
        java.io.File fd = new java.io.File("/proc/self/fd");
        String[] list = fd.list();
        return list == null ? -1 : list.length;
    }
}
