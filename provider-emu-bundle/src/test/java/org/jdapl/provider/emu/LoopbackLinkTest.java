package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.junit.jupiter.api.Test;

/** The loopback link's data engine: data moves in the poster's thread, under its pair's lock only. */
class LoopbackLinkTest {

    private static DatEvent.DtoCompletion dequeued(Fixture.Side side) {
        DatEvent e = side.evd.dequeue().orElseThrow(() -> new AssertionError("no completion queued yet"));
        return assertInstanceOf(DatEvent.DtoCompletion.class, e);
    }

    @Test
    void OBJ_07_sendIsDeliveredAndCompletedBeforeThePostReturns() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment src = f.memory(64);
            MemorySegment dst = f.memory(64);
            src.fill((byte) 0x5a);
            eps[1].postRecv(iov(f.b.lmr(dst), 0, 64), 2, none());
            eps[0].postSend(iov(f.a.lmr(src), 0, 64), 1, none());
            assertEquals(DtoStatus.SUCCESS, dequeued(f.a).status());
            DatEvent.DtoCompletion recv = dequeued(f.b);
            assertEquals(2, recv.cookie());
            assertEquals(64, recv.transferredLength());
            assertEquals((byte) 0x5a, dst.get(ValueLayout.JAVA_BYTE, 63));
        }
    }

    @Test
    void OBJ_08_rdmaWriteAndReadCompleteBeforeThePostReturns() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment local = f.memory(256);
            MemorySegment remote = f.memory(256);
            local.fill((byte) 3);
            LocalMemoryRegion target = f.b.lmr(remote);
            RmrTriplet rt = new RmrTriplet(target.rmrContext(), target.query().registeredAddress(), 256);
            LocalMemoryRegion src = f.a.lmr(local);
            eps[0].postRdmaWrite(iov(src, 0, 256), 1, rt, Dat.COMPLETION_DEFAULT);
            assertEquals(DtoStatus.SUCCESS, dequeued(f.a).status());
            assertEquals((byte) 3, remote.get(ValueLayout.JAVA_BYTE, 255));
            remote.fill((byte) 9);
            eps[0].postRdmaRead(iov(src, 0, 256), 2, rt, Dat.COMPLETION_DEFAULT);
            assertEquals(DtoStatus.SUCCESS, dequeued(f.a).status());
            assertEquals((byte) 9, local.get(ValueLayout.JAVA_BYTE, 0));
        }
    }

    @Test
    void sendWaitingForAReceiveProceedsWhenThePeerPostsOne() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            eps[0].postSend(iov(f.a.lmr(f.memory(8)), 0, 8), 1, none());
            assertTrue(f.a.evd.dequeue().isEmpty(), "the send waits for a receive (RNR)");
            eps[1].postRecv(iov(f.b.lmr(f.memory(8)), 0, 8), 2, none());
            assertEquals(DtoStatus.SUCCESS, dequeued(f.a).status());
            assertEquals(2, dequeued(f.b).cookie());
        }
    }

    @Test
    void connectedIasShareALockDomainAndDisjointPairsDoNot() throws Exception {
        try (Fixture one = new Fixture(); Fixture two = new Fixture()) {
            Endpoint[] pair1 = one.connect();
            Endpoint[] pair2 = two.connect();
            LockDomain d1 = ((EmuEp) pair1[0]).ia().domain();
            LockDomain d2 = ((EmuEp) pair2[0]).ia().domain();
            assertTrue(d1.sameAs(((EmuEp) pair1[1]).ia().domain()));
            assertTrue(d2.sameAs(((EmuEp) pair2[1]).ia().domain()));
            assertFalse(d1.sameAs(d2));
            // With pair 1's lock held by another thread, pair 2 still moves data.
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2);
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
                ReentrantLock lock = d1.acquire();
                try {
                    held.countDown();
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    lock.unlock();
                }
            }, threads);
            assertTrue(held.await(5, TimeUnit.SECONDS));
            try {
                CompletableFuture<DtoStatus> sent = CompletableFuture.supplyAsync(() -> {
                    pair2[1].postRecv(iov(two.b.lmr(two.memory(8)), 0, 8), 1, none());
                    pair2[0].postSend(iov(two.a.lmr(two.memory(8)), 0, 8), 2, none());
                    return dequeued(two.a).status();
                }, threads);
                assertEquals(DtoStatus.SUCCESS, sent.get(5, TimeUnit.SECONDS));
            } finally {
                release.countDown();
                holder.get(10, TimeUnit.SECONDS);
                threads.shutdown();
            }
        }
    }

    @Test
    void aWaiterWithNothingToWaitForIsParkedNotSpinning() throws Exception {
        try (Fixture f = new Fixture()) {
            Thread waiter = Thread.ofPlatform().start(() -> {
                try {
                    f.a.evd.waitEvent(Dat.TIMEOUT_INFINITE);
                } catch (RuntimeException e) {
                    // released when the IA closes
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (waiter.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(Thread.State.WAITING, waiter.getState());
            f.a.ia.close();
            waiter.join(5000);
            assertFalse(waiter.isAlive());
        }
    }
}
