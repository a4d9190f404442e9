package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalIov;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.OfaProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code waitEvent(timeout, 1, slot)} on an EVD with a CQ (the OFA provider's allocation-free wait:
 * a spin, then the waiter parked for the CQ's event) keeps the rules of {@code dat_evd_wait}: a
 * completion that comes while it is parked wakes it, an empty wait times out, a second consumer's
 * dequeue fails INVALID_STATE_EVD_WAITER while it waits, an unwaitable EVD fails, and the IA's close
 * releases it with ABORT (OBJ_03, OBJ_11).
 */
@Timeout(300)
class SlotWaitDeviceTest {
    private static final long WAIT = 10_000_000;
    private final OfaProvider provider = new OfaProvider();
    private InterfaceAdapter a;
    private InterfaceAdapter b;
    private Arena arena;
    private EventDispatcher evdA;
    private Endpoint epA;
    private LocalIov src;
    private MemorySegment dstMem;
    private RmrTriplet remote;

    @BeforeEach
    void connect() {
        a = RxeDevice.open(provider);
        b = RxeDevice.open(provider);
        arena = Arena.ofShared();
        ProtectionZone pa = a.createPz();
        ProtectionZone pb = b.createPz();
        evdA = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
        EventDispatcher connA = a.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
        EventDispatcher evdB = b.createEvd(16, null, EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR));
        epA = a.createEp(pa, evdA, evdA, connA, EpAttributes.defaults().withQueueDepths(8, 8));
        Endpoint epB = b.createEp(pb, evdB, evdB, evdB, EpAttributes.defaults().withQueueDepths(8, 8));
        src = LocalIov.of(a.createLmr(pa, arena.allocate(64, 64), Dat.MEM_PRIV_ALL, VaType.VA));
        dstMem = arena.allocate(64, 64);
        LocalMemoryRegion dst = b.createLmr(pb, dstMem, Dat.MEM_PRIV_ALL, VaType.VA);
        remote = new RmrTriplet(dst.rmrContext(), dst.query().registeredAddress(), 64);
        PublicServicePoint psp = b.createPspAny(evdB, PspFlag.CONSUMER);
        epA.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
        assertInstanceOf(DatEvent.ConnectionRequest.class, evdB.waitEvent(WAIT)).request().accept(epB, new byte[0]);
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, evdB.waitEvent(WAIT).number());
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, connA.waitEvent(WAIT).number());
        psp.free();
    }

    @AfterEach
    void close() {
        if (a != null) {
            a.close();
            b.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Starts a thread waiting into a slot on A's DTO EVD; waits until it is parked there. */
    private CompletableFuture<EventSlot> parkedWaiter(long timeoutMicros, AtomicReference<Thread> thread)
            throws Exception {
        CompletableFuture<EventSlot> done = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().daemon().start(() -> {
            try {
                EventSlot slot = new EventSlot();
                evdA.waitEvent(timeoutMicros, 1, slot);
                done.complete(slot);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        });
        thread.set(t);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            assertTrue(System.nanoTime() < end, "the waiter did not park within 30 s: " + t.getState());
            Thread.sleep(1);
        }
        return done;
    }

    @Test
    void OBJ_03_aParkedSlotWaiterIsWokenByItsCompletion() throws Exception {
        CompletableFuture<EventSlot> w = parkedWaiter(WAIT, new AtomicReference<>());
        Thread.sleep(50);
        assertFalse(w.isDone(), "nothing to take yet");
        epA.postRdmaWrite(src, 7, remote, Dat.COMPLETION_DEFAULT);
        EventSlot slot = w.get(30, TimeUnit.SECONDS);
        assertTrue(slot.isDtoCompletion());
        assertEquals(7, slot.cookie());
        assertEquals(DtoStatus.SUCCESS, slot.status());
        assertEquals(DtoOperation.RDMA_WRITE, slot.operation());
        assertEquals(64, slot.transferredLength());
        EventSlot again = new EventSlot();
        assertFalse(evdA.dequeue(again), "the completion was taken once");
    }

    @Test
    void OBJ_03_anEmptySlotWaitTimesOutAndADequeueMeanwhileFailsWaiter() throws Exception {
        CompletableFuture<EventSlot> w = parkedWaiter(300_000, new AtomicReference<>());
        DatException busy = assertThrows(DatException.class, () -> evdA.dequeue(new EventSlot()));
        assertEquals(DatReturnType.INVALID_STATE, busy.type());
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_WAITER, busy.subtype());
        Throwable timedOut = assertThrows(Exception.class, () -> w.get(30, TimeUnit.SECONDS)).getCause();
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, assertInstanceOf(DatException.class, timedOut).type());
        // The waiter left: the EVD is usable again, and a completion waited for now is taken.
        epA.postRdmaWrite(src, 8, remote, Dat.COMPLETION_DEFAULT);
        EventSlot slot = new EventSlot();
        evdA.waitEvent(WAIT, 1, slot);
        assertEquals(8, slot.cookie());
        assertEquals(DtoOperation.RDMA_WRITE, slot.operation());
    }

    @Test
    void OBJ_03_anUnwaitableEvdFailsASlotWait() {
        evdA.setUnwaitable();
        DatException e = assertThrows(DatException.class, () -> evdA.waitEvent(WAIT, 1, new EventSlot()));
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, e.subtype());
        evdA.clearUnwaitable();
        epA.postRdmaWrite(src, 9, remote, Dat.COMPLETION_DEFAULT);
        EventSlot slot = new EventSlot();
        evdA.waitEvent(WAIT, 1, slot);
        assertEquals(9, slot.cookie());
    }

    @Test
    void OBJ_11_theIasCloseReleasesAParkedSlotWaiterWithAbort() throws Exception {
        CompletableFuture<EventSlot> w = parkedWaiter(Dat.TIMEOUT_INFINITE, new AtomicReference<>());
        a.close();
        Throwable released = assertThrows(Exception.class, () -> w.get(30, TimeUnit.SECONDS)).getCause();
        assertEquals(DatReturnType.ABORT, assertInstanceOf(DatException.class, released).type());
        a = RxeDevice.open(provider); // for close()
    }
}
