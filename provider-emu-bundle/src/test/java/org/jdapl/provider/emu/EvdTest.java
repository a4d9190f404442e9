package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.Cno;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class EvdTest {
    private final EmuProvider provider = new EmuProvider();
    private InterfaceAdapter ia;
    private EventDispatcher evd;

    @BeforeEach
    void open() {
        ia = provider.open(new IaSpec("emu-evd", "loopback", "", true, "test"), 8);
        evd = ia.createEvd(4, null, EnumSet.of(EvdFlag.SOFTWARE));
    }

    @AfterEach
    void close() {
        ia.close();
    }

    @Test
    void waitWithNothingQueuedTimesOutAfterTheTimeout() {
        long start = System.nanoTime();
        DatException e = assertThrows(DatException.class, () -> evd.waitEvent(50_000));
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, e.type());
        assertTrue(tookMs >= 45, "returned after " + tookMs + " ms");
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, assertThrows(DatException.class, () -> evd.waitEvent(0)).type());
    }

    @Test
    void softwareEventIsDequeuedIntact() {
        Object payload = new Object();
        evd.postSoftwareEvent(payload);
        DatEvent.Software s = assertInstanceOf(DatEvent.Software.class, evd.dequeue().orElseThrow());
        assertEquals(payload, s.pointer());
        assertEquals(evd, s.evd());
        assertTrue(evd.dequeue().isEmpty());
    }

    @Test
    void postOnAFullQueueFailsQueueFull() {
        for (int i = 0; i < 4; i++) {
            evd.postSoftwareEvent(i);
        }
        assertEquals(DatReturnType.QUEUE_FULL,
                assertThrows(DatException.class, () -> evd.postSoftwareEvent(5)).type());
        assertEquals(4, evd.count());
    }

    @Test
    void thresholdHoldsTheWaiterUntilEnoughDtoEventsArrive() throws Exception {
        EventDispatcher dto = ia.createEvd(8, null, EnumSet.of(EvdFlag.DTO, EvdFlag.SOFTWARE));
        assertEquals(DatReturnType.INVALID_PARAMETER,
                assertThrows(DatException.class, () -> dto.waitEvent(0, 9)).type());
        // a non-DTO event satisfies any threshold
        dto.postSoftwareEvent("x");
        assertInstanceOf(DatEvent.Software.class, dto.waitEvent(1000, 3));
    }

    @Test
    void severalWaitersEachGetDistinctEventsAndNoneIsLost() throws Exception {
        EventDispatcher big = ia.createEvd(1000, null, EnumSet.of(EvdFlag.SOFTWARE));
        int waiters = 4;
        int perWaiter = 100;
        List<Object> seen = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch ready = new CountDownLatch(waiters);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < waiters; w++) {
            threads.add(Thread.ofPlatform().start(() -> {
                ready.countDown();
                for (int i = 0; i < perWaiter; i++) {
                    seen.add(((DatEvent.Software) big.waitEvent(5_000_000)).pointer());
                }
            }));
        }
        ready.await();
        for (int i = 0; i < waiters * perWaiter; i++) {
            big.postSoftwareEvent(i);
        }
        for (Thread t : threads) {
            t.join(10_000);
        }
        assertEquals(waiters * perWaiter, seen.size());
        assertEquals(waiters * perWaiter, new HashSet<>(seen).size());
    }

    @Test
    void waitBlocksWithoutBurningCpu() throws Exception {
        var bean = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        CompletableFuture<Long> cpu = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            long before = bean.getCurrentThreadCpuTime();
            assertThrows(DatException.class, () -> evd.waitEvent(300_000));
            cpu.complete(bean.getCurrentThreadCpuTime() - before);
        });
        t.join(5000);
        assertTrue(cpu.get(1, TimeUnit.SECONDS) < 100_000_000L, "a 300 ms wait used " + cpu.get() + " ns of CPU");
    }

    @Test
    void unwaitableReleasesWaitersAndRefusesNewWaits() throws Exception {
        CompletableFuture<DatException> failure = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                evd.waitEvent(5_000_000);
            } catch (DatException e) {
                failure.complete(e);
            }
        });
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(1);
        }
        evd.setUnwaitable();
        DatException e = failure.get(5, TimeUnit.SECONDS);
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, e.subtype());
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE,
                assertThrows(DatException.class, () -> evd.waitEvent(0)).subtype());
        evd.clearUnwaitable();
        evd.postSoftwareEvent(1);
        assertInstanceOf(DatEvent.Software.class, evd.waitEvent(0));
    }

    /** The failure of a thread blocked in an infinite wait on the EVD once {@code release} ran. */
    private DatException failureOfBlockedWait(java.util.function.Consumer<Thread> release) throws Exception {
        CompletableFuture<DatException> failure = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                evd.waitEvent(org.jdapl.dat.Dat.TIMEOUT_INFINITE);
            } catch (DatException e) {
                failure.complete(e);
            }
        });
        while (t.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        release.accept(t);
        return failure.get(5, TimeUnit.SECONDS);
    }

    @Test
    void interruptedWaitFailsInterruptedCall() throws Exception {
        assertEquals(DatReturnType.INTERRUPTED_CALL, failureOfBlockedWait(Thread::interrupt).type());
    }

    @Test
    void overflowIsReportedOnTheAsyncEvdAndNoEventIsLost() {
        try (Fixture f = new Fixture(2)) {
            var eps = f.connect();
            var recvLmr = f.b.lmr(f.memory(64));
            var sendLmr = f.a.lmr(f.memory(64));
            for (int i = 0; i < 5; i++) {
                eps[1].postRecv(Fixture.iov(recvLmr, i, 1), i, Fixture.none());
            }
            for (int i = 0; i < 5; i++) {
                eps[0].postSend(Fixture.iov(sendLmr, i, 1), i, Fixture.none());
            }
            EventDispatcher async = f.b.ia.query().asyncEvd();
            DatEvent.AsyncError overflow = assertInstanceOf(DatEvent.AsyncError.class, async.waitEvent(1_000_000));
            assertEquals(EventNumber.ASYNC_ERROR_EVD_OVERFLOW, overflow.number());
            assertEquals(f.b.evd, overflow.handle());
            Set<Long> cookies = new HashSet<>();
            while (cookies.size() < 5) {
                cookies.add(((DatEvent.DtoCompletion) f.b.evd.waitEvent(Fixture.WAIT)).cookie());
            }
            assertEquals(0, f.b.evd.count());
            assertEquals(Set.of(0L, 1L, 2L, 3L, 4L), cookies);
        }
    }

    @Test
    void freeInUseFailsAndResizeKeepsEvents() {
        var pz = ia.createPz();
        EventDispatcher used = ia.createEvd(4, null, EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION));
        var ep = ia.createEp(pz, used, used, used, null);
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                assertThrows(DatException.class, used::free).subtype());
        ep.free();
        used.free();
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, used::count).type());
        evd.postSoftwareEvent(1);
        evd.postSoftwareEvent(2);
        assertEquals(DatReturnType.INVALID_STATE, assertThrows(DatException.class, () -> evd.resize(1)).type());
        evd.resize(16);
        assertEquals(16, evd.query().qlen());
        assertEquals(2, evd.count());
    }

    @Test
    void cnoIsTriggeredByAnAttachedEvdAndCallsItsAgent() throws Exception {
        CompletableFuture<EventDispatcher> agentSaw = new CompletableFuture<>();
        Cno cno = ia.createCno(agentSaw::complete);
        EventDispatcher attached = ia.createEvd(4, cno, EnumSet.of(EvdFlag.SOFTWARE));
        CompletableFuture<EventDispatcher> stage = cno.nextTrigger().toCompletableFuture();
        attached.postSoftwareEvent("a");
        assertEquals(attached, stage.get(5, TimeUnit.SECONDS));
        assertEquals(attached, agentSaw.get(5, TimeUnit.SECONDS));
        attached.postSoftwareEvent("b");
        assertEquals(attached, cno.waitCno(1_000_000));
        assertTrue(cno.trigger().isEmpty());
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, assertThrows(DatException.class, () -> cno.waitCno(10_000)).type());
        assertEquals(DatReturnSubtype.INVALID_STATE_CNO_IN_USE, assertThrows(DatException.class, cno::free).subtype());
        attached.modifyCno(null);
        cno.free();
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, cno::trigger).type());
    }

    @Test
    void closingTheIaReleasesAWaiterWithAbort() throws Exception {
        assertEquals(DatReturnType.ABORT, failureOfBlockedWait(t -> ia.close()).type());
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, () -> evd.waitEvent(0)).type());
    }
}
