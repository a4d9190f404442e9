package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.provider.ofa.IaLocks;
import org.jdapl.provider.ofa.OfaProvider;
import org.junit.jupiter.api.Test;

/** An IA that closes while a connection request arrives at its PSP. */
class CloseRaceDeviceTest {
    private static final long WAIT = 10_000_000;

    /**
     * OBJ_01, OBJ_06: a connect request that arrives at a consumer PSP while the PSP's IA closes is
     * refused, or becomes a CR that the close frees; none is left behind. The request's arrival waits
     * for the IA's lock, which the close holds while it destroys the IA's objects (service points,
     * then requests, then EPs): the test holds that lock while the request arrives, then closes the
     * IA from another thread, and either may take the lock first.
     */
    @Test
    void OBJ_01_aRequestArrivingWhileTheIaClosesIsNotLeftBehind() throws Exception {
        OfaProvider provider = new OfaProvider();
        InterfaceAdapter a = RxeDevice.open(provider);
        InterfaceAdapter b = RxeDevice.open(provider);
        try {
            ProtectionZone pa = a.createPz();
            EventDispatcher da = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION));
            EventDispatcher cr = b.createEvd(16, null, EnumSet.of(EvdFlag.CR));
            PublicServicePoint psp = b.createPspAny(cr, PspFlag.CONSUMER);
            Endpoint ea = a.createEp(pa, da, da, da, null);
            ReentrantLock closing = IaLocks.of(b);
            CompletableFuture<Void> close;
            closing.lock();
            try {
                ea.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!closing.hasQueuedThreads()) {
                    assertEquals(0, provider.openObjects().getOrDefault(HandleType.CR, 0),
                            "the request became a CR at the PSP while its IA's lock was held, as by a close"
                            + " destroying the IA's objects: a close that has gone past its requests leaves it"
                            + " behind");
                    assertTrue(System.nanoTime() < deadline, "the request did not reach the PSP within 10 s");
                    Thread.sleep(1);
                }
                close = CompletableFuture.runAsync(() -> b.close(CloseFlag.ABRUPT));
                while (closing.getQueueLength() < 2 && !close.isDone()) {
                    assertTrue(System.nanoTime() < deadline, "the close did not start within 10 s");
                    Thread.sleep(1);
                }
            } finally {
                closing.unlock();
            }
            close.get(30, TimeUnit.SECONDS);
            assertTrue(b.isFreed());
            assertFalse(provider.openObjects().containsKey(HandleType.CR), provider.openObjects().toString());
            DatEvent.Connection end = assertInstanceOf(DatEvent.Connection.class, da.waitEvent(4 * WAIT),
                    "the active side hears that its request went unanswered");
            assertTrue(Set.of(EventNumber.CONNECTION_NON_PEER_REJECTED, EventNumber.CONNECTION_PEER_REJECTED,
                    EventNumber.CONNECTION_UNREACHABLE, EventNumber.CONNECTION_TIMED_OUT).contains(end.number()),
                    end.number().toString());
        } finally {
            a.close();
            b.close();
        }
        assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
    }
}
