package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jdapl.provider.emu.tcp.TcpFabric;

/** The tcp fabric between two IAs of this JVM over 127.0.0.1: establishment, data movement, disconnect. */
@Timeout(60)
class TcpFabricTest {

    @Test
    void iaListensOnItsAddressWithTheRealPort() {
        try (Fixture f = Fixture.tcp()) {
            InetSocketAddress a = (InetSocketAddress) f.a.ia.query().attributes().address();
            assertEquals("127.0.0.1", a.getAddress().getHostAddress());
            assertNotEquals(0, a.getPort());
            assertEquals("tcp", f.a.ia.query().attributes().specific().get("fabric"));
        }
    }

    /**
     * A consumer polling an empty EVD of a tcp IA with {@code dat_evd_dequeue} sleeps in the IA's
     * sockets once it has polled a while, rather than spinning on them, each dequeue returning within
     * a millisecond or so; an event queued from another thread reaches it.
     */
    @Test
    void aPollingConsumerSleepsBrieflyInTheSocketsAndGetsAnEventQueuedFromElsewhere() throws Exception {
        try (Fixture f = Fixture.tcp()) {
            EventDispatcher evd = f.a.ia.createEvd(4, null, EnumSet.of(EvdFlag.SOFTWARE));
            CompletableFuture<Void> posted = CompletableFuture.runAsync(() -> {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                evd.postSoftwareEvent("late");
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            long longest = 0;
            int dequeues = 0;
            Optional<DatEvent> e = Optional.empty();
            while (e.isEmpty() && System.nanoTime() < deadline) {
                long t0 = System.nanoTime();
                e = evd.dequeue();
                longest = Math.max(longest, System.nanoTime() - t0);
                dequeues++;
            }
            posted.get(10, TimeUnit.SECONDS);
            assertEquals("late", assertInstanceOf(DatEvent.Software.class, e.orElseThrow()).pointer());
            assertTrue(longest < TimeUnit.MILLISECONDS.toNanos(500), "a dequeue took " + longest / 1000 + " us");
            assertTrue(dequeues < 5_000, dequeues + " dequeues in 100 ms: the consumer spun on the sockets");
        }
    }

    /**
     * While large frames come, a consumer polling an empty EVD blocks in the sockets at once, as a
     * waiter does, rather than reading them without blocking (a read beside the peer's write of a
     * large frame slows that write): after a 64 KiB message its first empty dequeue sleeps (up to a
     * millisecond), after a 64 B message it returns at once.
     */
    @Test
    void aPollingConsumerBlocksAtOnceWhileLargeFramesCome() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            int large = 64 << 10;
            LocalMemoryRegion sl = f.a.lmr(f.memory(large));
            LocalMemoryRegion dl = f.b.lmr(f.memory(large));
            long smallFirst = Long.MAX_VALUE;
            long largeFirst = Long.MAX_VALUE;
            for (int i = 0; i < 6; i++) {
                int size = i % 2 == 0 ? 64 : large;
                eps[1].postRecv(iov(dl, 0, large), i, none());
                eps[0].postSend(iov(sl, 0, size), i, none());
                assertEquals(i, f.a.nextDto().cookie());
                Optional<DatEvent> e = Optional.empty();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (e.isEmpty() && System.nanoTime() < deadline) {
                    e = f.b.evd.dequeue();
                }
                assertEquals(size, assertInstanceOf(DatEvent.DtoCompletion.class, e.orElseThrow()).transferredLength());
                long t0 = System.nanoTime();
                assertTrue(f.b.evd.dequeue().isEmpty());
                long first = System.nanoTime() - t0;
                if (size == large) {
                    largeFirst = Math.min(largeFirst, first);
                } else {
                    smallFirst = Math.min(smallFirst, first);
                }
            }
            assertTrue(largeFirst > TimeUnit.MICROSECONDS.toNanos(300),
                    "the first empty dequeue after a large message returned in " + largeFirst / 1000 + " us");
            assertTrue(smallFirst < TimeUnit.MICROSECONDS.toNanos(300),
                    "the first empty dequeue after a small message took " + smallFirst / 1000 + " us");
        }
    }

    @Test
    void badIaParamsAreRefused() {
        EmuProvider p = new EmuProvider();
        for (String params : List.of("tcp", "tcp 127.0.0.1", "tcp 127.0.0.1:70000", "tcp nowhere.invalid:1",
                "tcp 127.0.0.1:x", "tcp 239.1.1.1:0")) {
            DatException e = assertThrows(DatException.class, () -> p.open(new IaSpec("x", params, "", true, "t"), 4),
                    params);
            assertEquals(DatReturnType.INVALID_PARAMETER, e.type(), params);
        }
    }

    @Test
    void sendRdmaWriteAndReadMoveExactBytes() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            int size = 256 << 10;
            MemorySegment src = f.memory(size);
            for (int i = 0; i < size; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + (i >>> 9)));
            }
            MemorySegment dst = f.memory(size + 128);
            dst.fill((byte) 0x5a);
            LocalMemoryRegion sl = f.a.lmr(src);
            LocalMemoryRegion dl = f.b.lmr(dst);
            eps[1].postRecv(iov(dl, 64, size), 7, none());
            eps[0].postSend(iov(sl, 0, 100), 1, none());
            eps[0].postRdmaWrite(iov(sl, 0, size), 2, new RmrTriplet(dl.rmrContext(),
                    dl.query().registeredAddress() + 64, size), none());
            MemorySegment back = f.memory(size);
            LocalMemoryRegion bl = f.a.lmr(back);
            eps[0].postRdmaRead(iov(bl, 0, size), 3, new RmrTriplet(dl.rmrContext(),
                    dl.query().registeredAddress() + 64, size), none());
            for (long cookie = 1; cookie <= 3; cookie++) {
                DatEvent.DtoCompletion c = f.a.nextDto();
                assertEquals(cookie, c.cookie());
                assertEquals(DtoStatus.SUCCESS, c.status(), () -> "cookie " + c.cookie());
            }
            DatEvent.DtoCompletion r = f.b.nextDto();
            assertEquals(7, r.cookie());
            assertEquals(100, r.transferredLength());
            assertEquals(DtoOperation.RECEIVE, r.operation());
            assertArrayEquals(src.toArray(ValueLayout.JAVA_BYTE), dst.asSlice(64, size).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(src.toArray(ValueLayout.JAVA_BYTE), back.toArray(ValueLayout.JAVA_BYTE));
            for (int i = 0; i < 64; i++) {
                assertEquals((byte) 0x5a, dst.get(ValueLayout.JAVA_BYTE, i));
                assertEquals((byte) 0x5a, dst.get(ValueLayout.JAVA_BYTE, 64 + size + i));
            }
        }
    }

    @Test
    void gracefulDisconnectCompletesOnBothSides() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            eps[0].disconnect(CloseFlag.GRACEFUL);
            f.a.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
            f.b.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
            assertEquals(EpState.DISCONNECTED, eps[0].query().state());
            assertEquals(EpState.DISCONNECTED, eps[1].query().state());
        }
    }

    @Test
    void abruptDisconnectFlushesThePeer() {
        try (Fixture f = Fixture.tcp()) {
            f.abruptDisconnectFlushesThePeer(f.connect());
        }
    }

    @Test
    void sendWithoutReceiveCompletesReceiverNotReadyAfterTheRetryTime() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion l = f.a.lmr(f.memory(64));
            long start = System.nanoTime();
            eps[0].postSend(iov(l, 0, 64), 1, none());
            DatEvent.DtoCompletion c = f.a.nextDto();
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(DtoStatus.RECEIVER_NOT_READY, c.status());
            assertTrue(ms >= EmuLimits.RNR_RETRY_MILLIS - 50 && ms < EmuLimits.RNR_RETRY_MILLIS + 2000, "after " + ms);
            f.a.nextConnection(EventNumber.CONNECTION_BROKEN);
            f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
        }
    }

    @Test
    void sendWaitsForAReceivePostedWithinTheRetryTime() throws InterruptedException {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            LocalMemoryRegion dst = f.b.lmr(f.memory(64));
            eps[0].postSend(iov(src, 0, 64), 1, none());
            Thread.sleep(300);
            eps[1].postRecv(iov(dst, 0, 64), 2, none());
            assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
            assertEquals(DtoStatus.SUCCESS, f.b.nextDto().status());
        }
    }

    @Test
    void rdmaWriteOutsideTheRegionFailsRemoteAccessAndBreaks() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            MemorySegment target = f.memory(4096 + 64);
            target.fill((byte) 0x11);
            LocalMemoryRegion tl = f.b.lmr(target.asSlice(32, 4096));
            LocalMemoryRegion src = f.a.lmr(f.memory(128));
            eps[0].postRdmaWrite(iov(src, 0, 128), 1, new RmrTriplet(tl.rmrContext(),
                    tl.query().registeredAddress() + 4000, 128), none());
            assertEquals(DtoStatus.REMOTE_ACCESS, f.a.nextDto().status());
            f.a.nextConnection(EventNumber.CONNECTION_BROKEN);
            f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
            for (long i = 0; i < target.byteSize(); i++) {
                assertEquals((byte) 0x11, target.get(ValueLayout.JAVA_BYTE, i));
            }
        }
    }

    @Test
    void rejectAndNoListenerAreReported() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint ep = f.a.ep();
            ep.connect(f.b.ia.query().attributes().address(), 4242, Fixture.WAIT, new byte[0]);
            f.a.nextConnection(EventNumber.CONNECTION_NON_PEER_REJECTED);
            PublicServicePoint psp = f.b.ia.createPspAny(f.b.evd, PspFlag.CONSUMER);
            Endpoint ep2 = f.a.ep();
            ep2.connect(f.b.ia.query().attributes().address(), psp.query().connQual(), Fixture.WAIT,
                    new byte[] {1, 2, 3});
            DatEvent e = f.b.next();
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, e);
            assertArrayEquals(new byte[] {1, 2, 3}, cr.request().query().privateData());
            assertEquals(f.a.ia.query().attributes().address(), cr.request().query().remoteAddress());
            cr.request().reject(new byte[] {9});
            DatEvent.Connection rej = f.a.nextConnection(EventNumber.CONNECTION_PEER_REJECTED);
            assertArrayEquals(new byte[] {9}, rej.privateData());
        }
    }

    @Test
    void closedPortIsUnreachable() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint ep = f.a.ep();
            ep.connect(new TcpFabric(null).unassignedAddress(), 1, Fixture.WAIT, new byte[0]);
            f.a.nextConnection(EventNumber.CONNECTION_UNREACHABLE);
        }
    }

    /**
     * One thread drives both ends of a connection by polling: it posts a receive on B, a send on A,
     * dequeues B's EVD until the receive completes, then A's until the send completes. The ACK of the
     * send, which B's input deferred so that it could share a write with a reply, leaves with that
     * thread's next poll (of A's EVD here), not at B's I/O thread's next turn: B's I/O thread is kept
     * from selecting throughout (as while a waiter polls), and the send completes all the same.
     */
    @Test
    void OBJ_07_theAckOfAFrameAPollingThreadTookLeavesWithItsNextPollNotWithTheIoThread() {
        try (Fixture f = Fixture.tcp()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            LocalMemoryRegion dst = f.b.lmr(f.memory(64));
            Fabric bFabric = ((EmuIa) f.b.ia).fabric();
            bFabric.announcePoll();
            try {
                for (int round = 0; round < 3; round++) {
                    eps[1].postRecv(iov(dst, 0, 64), round, none());
                    eps[0].postSend(iov(src, 0, 64), round, none());
                    DatEvent.DtoCompletion recv = polled(f.b.evd, "the receive of round " + round);
                    assertEquals(DtoStatus.SUCCESS, recv.status(), "the receive of round " + round);
                    DatEvent.DtoCompletion send = polled(f.a.evd, "the send of round " + round);
                    int r = round;
                    assertEquals(DtoStatus.SUCCESS, send.status(), () -> "the send of round " + r + " completed "
                            + send.status() + ": its ACK was left for B's I/O thread, and A judged B silent");
                    assertEquals(round, send.cookie());
                }
            } finally {
                bFabric.pollWhileWaiting(0);
            }
        }
    }

    /** The next event of {@code evd}, dequeued by polling for up to 10 s (a bound, not a timing). */
    private static DatEvent.DtoCompletion polled(EventDispatcher evd, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            Optional<DatEvent> e = evd.dequeue();
            if (e.isPresent()) {
                return assertInstanceOf(DatEvent.DtoCompletion.class, e.get());
            }
        }
        throw new AssertionError(what + " did not complete within 10 s of polling");
    }
}
