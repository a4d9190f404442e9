package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.junit.jupiter.api.Test;

/**
 * The lock order of the emulated provider ({@link LockDomain}): no thread takes a domain lock while it
 * holds an EP's {@link SendLock} without it. The loopback send that moves without the domain lock
 * queues its completions itself, and an EVD going over its length there is reported without the
 * domain lock.
 */
class LockOrderTest {
    /** How long the three threads run (they stop earlier after {@link #POSTS} posts each). */
    private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final int POSTS = 40_000;
    /** How long the threads get to end once told to: far more than any of them needs when nothing hangs. */
    private static final long JOIN_MILLIS = 20_000;

    /**
     * The pattern of issue 46: on one connected loopback pair, thread A loops 64 B sends (the peer's
     * thread reposts the receives), thread B loops 1 KiB RDMA Writes on the same EP, and thread C
     * dequeues the client's request EVD of length 8 every 0.2 ms, so that the sends' completions keep
     * taking it over its length. A send moving under its EP's send lock reported the overflow through
     * a query that took the domain lock, while the RDMA Write held the domain lock and waited for the
     * send lock: every thread hung. Here every thread must end, each overflow be reported (OBJ_04) and
     * every DTO complete exactly once.
     */
    @Test
    void OBJ_04_overflowOfARequestEvdFedBySendsAndRdmaWritesDoesNotDeadlock() throws Exception {
        Fixture f = new Fixture();
        boolean hung = false;
        try {
            EventDispatcher requestEvd = f.a.ia.createEvd(8, null, Dat.EVD_DEFAULT_FLAGS);
            EventDispatcher recvEvd = f.b.ia.createEvd(4096, null, Dat.EVD_DEFAULT_FLAGS);
            Endpoint client = f.a.ia.createEp(f.a.pz, f.a.evd, requestEvd, f.a.evd, EpAttributes.defaults());
            Endpoint server = f.b.ia.createEp(f.b.pz, recvEvd, f.b.evd, f.b.evd, EpAttributes.defaults());
            f.connect(client, server, new byte[0]);
            LocalMemoryRegion sendLmr = f.a.lmr(f.memory(64));
            LocalMemoryRegion writeLmr = f.a.lmr(f.memory(1024));
            LocalMemoryRegion recvLmr = f.b.lmr(f.memory(64 * 64));
            LocalMemoryRegion target = f.b.lmr(f.memory(1024));
            RmrTriplet remote = new RmrTriplet(target.rmrContext(), target.query().registeredAddress(), 1024);
            int receives = 64;
            for (int i = 0; i < receives; i++) {
                server.postRecv(iov(recvLmr, i * 64L, 64), i, none());
            }

            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            AtomicLong sends = new AtomicLong();
            AtomicLong writes = new AtomicLong();
            AtomicLong requestCompletions = new AtomicLong();
            AtomicLong recvCompletions = new AtomicLong();
            long end = System.nanoTime() + RUN_NANOS;
            List<Thread> threads = new ArrayList<>();
            threads.add(worker("A-send", failures, () -> {
                for (int i = 0; i < POSTS && !stop.get() && System.nanoTime() - end < 0; i++) {
                    int cookie = i;
                    if (posted(() -> client.postSend(iov(sendLmr, 0, 64), cookie, none()))) {
                        sends.incrementAndGet();
                    }
                }
            }));
            threads.add(worker("B-rdma-write", failures, () -> {
                for (int i = 0; i < POSTS && !stop.get() && System.nanoTime() - end < 0; i++) {
                    int cookie = 1_000_000 + i;
                    if (posted(() -> client.postRdmaWrite(iov(writeLmr, 0, 1024), cookie, remote, none()))) {
                        writes.incrementAndGet();
                    }
                }
            }));
            threads.add(worker("C-dequeue", failures, () -> {
                while (!stop.get() && System.nanoTime() - end < 0) {
                    drain(requestEvd, requestCompletions);
                    TimeUnit.MICROSECONDS.sleep(200);
                }
            }));
            threads.add(worker("server-repost", failures, () -> {
                while (!stop.get() && System.nanoTime() - end < 0) {
                    Optional<DatEvent> e = recvEvd.dequeue();
                    if (e.isPresent() && e.get() instanceof DatEvent.DtoCompletion c) {
                        assertEquals(DtoStatus.SUCCESS, c.status());
                        recvCompletions.incrementAndGet();
                        server.postRecv(iov(recvLmr, (c.cookie() % receives) * 64, 64), c.cookie(), none());
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }));
            threads.forEach(Thread::start);
            long joinEnd = System.nanoTime() + TimeUnit.NANOSECONDS.toMillis(RUN_NANOS) * 1_000_000L
                    + TimeUnit.MILLISECONDS.toNanos(JOIN_MILLIS);
            for (Thread t : threads) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinEnd - System.nanoTime())));
            }
            stop.set(true);
            List<Thread> alive = threads.stream().filter(Thread::isAlive).toList();
            if (!alive.isEmpty()) {
                // The IAs cannot be closed either (a hung thread holds the domain lock): left to the daemon threads.
                hung = true;
                fail("deadlock: " + alive.size() + " thread(s) still running " + JOIN_MILLIS + " ms after the "
                        + "run ended (after " + sends.get() + " sends and " + writes.get() + " RDMA Writes):\n"
                        + dump(alive));
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError("a thread failed: " + failures.peek(), failures.peek());
                failures.forEach(e::addSuppressed);
                throw e;
            }
            // Sends still queued wait for receives: the server keeps reposting until every DTO completed.
            long quiet = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (requestCompletions.get() < sends.get() + writes.get() && System.nanoTime() - quiet < 0) {
                drain(requestEvd, requestCompletions);
                for (Optional<DatEvent> e = recvEvd.dequeue(); e.isPresent(); e = recvEvd.dequeue()) {
                    DatEvent.DtoCompletion c = (DatEvent.DtoCompletion) e.get();
                    assertEquals(DtoStatus.SUCCESS, c.status());
                    recvCompletions.incrementAndGet();
                    server.postRecv(iov(recvLmr, (c.cookie() % receives) * 64, 64), c.cookie(), none());
                }
            }
            drain(requestEvd, requestCompletions);
            while (recvEvd.dequeue().isPresent()) {
                recvCompletions.incrementAndGet();
            }
            assertEquals(sends.get() + writes.get(), requestCompletions.get(), "every DTO completes exactly once");
            assertEquals(sends.get(), recvCompletions.get(), "every send is received exactly once");
            assertTrue(sends.get() > 0 && writes.get() > 0, "both posting threads posted");
            boolean overflowReported = false;
            for (Optional<DatEvent> e = f.a.ia.query().asyncEvd().dequeue(); e.isPresent();
                    e = f.a.ia.query().asyncEvd().dequeue()) {
                if (e.get() instanceof DatEvent.AsyncError a && a.number() == EventNumber.ASYNC_ERROR_EVD_OVERFLOW) {
                    overflowReported = true;
                }
            }
            assertTrue(overflowReported, "the request EVD's overflow is reported (OBJ_04)");
        } finally {
            if (!hung) {
                f.close();
            }
        }
    }

    /**
     * Posts; false if the EP's request queue is full (sends wait for the reposted receives now and
     * then, and the RDMA Writes queue behind them): the caller goes on with its next post.
     */
    private static boolean posted(Runnable post) {
        try {
            post.run();
            return true;
        } catch (DatException e) {
            if (e.type() != DatReturnType.INSUFFICIENT_RESOURCES) {
                throw e;
            }
            Thread.yield();
            return false;
        }
    }

    private static void drain(EventDispatcher evd, AtomicLong completions) {
        for (Optional<DatEvent> e = evd.dequeue(); e.isPresent(); e = evd.dequeue()) {
            DatEvent.DtoCompletion c = (DatEvent.DtoCompletion) e.get();
            assertEquals(DtoStatus.SUCCESS, c.status());
            completions.incrementAndGet();
        }
    }

    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    private static Thread worker(String name, ConcurrentLinkedQueue<Throwable> failures, Body body) {
        return Thread.ofPlatform().daemon().name("lock-order-" + name).unstarted(() -> {
            try {
                body.run();
            } catch (Throwable t) {
                failures.add(t);
            }
        });
    }

    /** The stacks and held locks of {@code threads}, as a thread dump shows them. */
    private static String dump(List<Thread> threads) {
        StringBuilder b = new StringBuilder();
        for (Thread t : threads) {
            ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(new long[] {t.threadId()}, true, true)[0];
            if (info == null) {
                b.append(t.getName()).append(" (gone)\n");
            } else {
                b.append('"').append(info.getThreadName()).append("\" ").append(info.getThreadState())
                        .append(info.getLockName() == null ? "" : " on " + info.getLockName()).append('\n');
                for (StackTraceElement s : info.getStackTrace()) {
                    b.append("        at ").append(s).append('\n');
                }
            }
        }
        return b.toString();
    }
}
