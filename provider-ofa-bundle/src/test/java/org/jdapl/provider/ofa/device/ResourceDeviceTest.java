package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.OfaProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** PZ, EVD, LMR, RMR, PSP and EP on a real device. */
class ResourceDeviceTest {
    private final OfaProvider provider = new OfaProvider();
    private InterfaceAdapter ia;
    private Arena arena;

    @BeforeEach
    void open() {
        ia = RxeDevice.open(provider);
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        if (ia != null) {
            ia.close();
            assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
        }
        if (arena != null) {
            arena.close();
        }
    }

    @Test
    void OBJ_02_pzCreateQueryFreeAndInUse() {
        ProtectionZone pz = ia.createPz();
        assertEquals(ia, pz.query().ia());
        LocalMemoryRegion lmr = ia.createLmr(pz, arena.allocate(4096), Dat.MEM_PRIV_ALL, VaType.VA);
        DatException e = assertThrows(DatException.class, pz::free);
        assertEquals(DatReturnSubtype.INVALID_STATE_PZ_IN_USE, e.subtype());
        lmr.free();
        pz.free();
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, pz::free).type());
    }

    @Test
    void OBJ_03_evdWaitTimesOutAndSoftwareEventsArrive() {
        EventDispatcher evd = ia.createEvd(8, null, EnumSet.of(EvdFlag.SOFTWARE, EvdFlag.DTO));
        assertEquals(8, evd.query().qlen());
        DatException zero = assertThrows(DatException.class, () -> evd.waitEvent(0));
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, zero.type());
        long t0 = System.nanoTime();
        DatException timed = assertThrows(DatException.class, () -> evd.waitEvent(200_000));
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, timed.type());
        assertTrue(waitedMs >= 190, "waited only " + waitedMs + " ms");
        assertTrue(evd.dequeue().isEmpty());
        Object payload = new Object();
        evd.postSoftwareEvent(payload);
        DatEvent ev = evd.waitEvent(1_000_000);
        assertEquals(payload, assertInstanceOf(DatEvent.Software.class, ev).pointer());
        // A waiter is woken by an event posted from another thread.
        Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            evd.postSoftwareEvent("late");
        });
        assertEquals("late", ((DatEvent.Software) evd.waitEvent(5_000_000)).pointer());
        assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                () -> evd.waitEvent(0, 9)).type());
        System.out.println("EVD with CQ: wait(0) and wait(200 ms) timed out after " + waitedMs
                + " ms; software events dequeued");
        evd.free();
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, evd::count).type());
    }

    @Test
    void OBJ_04_softwareEventOnFullQueueFailsQueueFull() {
        EventDispatcher evd = ia.createEvd(2, null, EnumSet.of(EvdFlag.SOFTWARE));
        evd.postSoftwareEvent(1);
        evd.postSoftwareEvent(2);
        assertEquals(DatReturnType.QUEUE_FULL, assertThrows(DatException.class, () -> evd.postSoftwareEvent(3)).type());
        assertEquals(2, evd.count());
        evd.free();
    }

    @Test
    void LMR_02_freeLeavesTheSegmentUsableAndLMR_03_freedHandleFailsInvalidHandle() {
        ProtectionZone pz = ia.createPz();
        MemorySegment seg = arena.allocate(65536, 4096);
        LocalMemoryRegion lmr = ia.createLmr(pz, seg, Dat.MEM_PRIV_ALL, VaType.VA);
        LocalMemoryRegion.LmrParam q = lmr.query();
        assertEquals(seg.address(), q.registeredAddress());
        assertEquals(65536, q.registeredSize());
        assertEquals(Dat.MEM_PRIV_ALL, q.privileges());
        assertNotEquals(0, q.rmrContext());
        assertEquals(pz, q.pz());
        lmr.free();
        seg.set(ValueLayout.JAVA_LONG, 8, 0x1234_5678_9abcL);
        assertEquals(0x1234_5678_9abcL, seg.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(seg, lmr.segment());
        for (Runnable call : List.<Runnable>of(lmr::query, lmr::free, lmr::lmrContext, () -> lmr.setConsumerContext(1))) {
            DatException e = assertThrows(DatException.class, call::run);
            assertEquals(DatReturnType.INVALID_HANDLE, e.type());
            assertEquals(DatReturnSubtype.INVALID_HANDLE_LMR, e.subtype());
        }
        System.out.println("LMR lkey 0x" + Integer.toHexString(q.lmrContext()) + " rkey 0x"
                + Integer.toHexString(q.rmrContext()) + " registered, queried, freed; segment still usable");
    }

    @Test
    void LMR_01_anLmrWithUnboundRmrsFreesAndBindNeedsAConnectedEp() {
        ProtectionZone pz = ia.createPz();
        LocalMemoryRegion lmr = ia.createLmr(pz, arena.allocate(8192), Dat.MEM_PRIV_ALL, VaType.VA);
        RemoteMemoryRegion rmr = pz.createRmr();
        assertEquals(0, rmr.query().rmrContext());
        EventDispatcher dto = ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO, EvdFlag.RMR_BIND));
        EventDispatcher conn = ia.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
        Endpoint ep = ia.createEp(pz, dto, dto, conn, null);
        DatException e = assertThrows(DatException.class,
                () -> rmr.bind(lmr, 0, 4096, Set.of(MemPriv.REMOTE_READ), VaType.VA, ep, 1, Dat.COMPLETION_DEFAULT));
        assertEquals(DatReturnType.INVALID_STATE, e.type());
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED, e.subtype());
        assertEquals(DatReturnType.PRIVILEGES_VIOLATION, assertThrows(DatException.class,
                () -> rmr.bind(ia.createLmr(pz, arena.allocate(64), Set.of(MemPriv.LOCAL_READ), VaType.VA), 0, 64,
                        Set.of(MemPriv.REMOTE_WRITE), VaType.VA, ep, 1, Dat.COMPLETION_DEFAULT)).type());
        assertEquals(null, rmr.query().lmr());
        lmr.free();
        rmr.free();
        ep.free();
    }

    @Test
    void OBJ_05_emptyAndHeapSegmentsAreRefusedAndZeroBasedRegistrationWorks() {
        ProtectionZone pz = ia.createPz();
        DatException empty = assertThrows(DatException.class,
                () -> ia.createLmr(pz, arena.allocate(0), Dat.MEM_PRIV_ALL, VaType.VA));
        assertEquals(DatReturnType.LENGTH_ERROR, empty.type());
        DatException heap = assertThrows(DatException.class,
                () -> ia.createLmr(pz, MemorySegment.ofArray(new byte[4096]), Dat.MEM_PRIV_ALL, VaType.VA));
        assertEquals(DatReturnType.INVALID_PARAMETER, heap.type());
        assertTrue(heap.getMessage().contains("heap segment"), heap.getMessage());
        LocalMemoryRegion again = ia.createLmr(pz, arena.allocate(4096), Dat.MEM_PRIV_ALL, VaType.VA);
        again.free();
        again = ia.createLmr(pz, arena.allocate(4096), Set.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        assertEquals(0, again.query().rmrContext());
        again.free();
        assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class, () -> ia.createLmr(pz,
                arena.allocate(8192, 4096).asSlice(8), Dat.MEM_PRIV_ALL, VaType.ZB)).type());
        LocalMemoryRegion zb = ia.createLmr(pz, arena.allocate(4096, 4096), Dat.MEM_PRIV_ALL, VaType.ZB);
        assertEquals(0, zb.query().registeredAddress());
        zb.free();
    }

    @Test
    void OBJ_02_rmrOfBothScopesIsAWindowOrARegistrationOfItsOwn() {
        var attrs = ia.query().attributes().specific();
        System.out.println("memory windows: type 1 " + attrs.get("mw_type1") + ", type 2 " + attrs.get("mw_type2")
                + ", device_cap_flags " + attrs.get("device_cap_flags") + ", max_mw " + attrs.get("max_mw"));
        ProtectionZone pz = ia.createPz();
        for (boolean epScope : new boolean[] {false, true}) {
            {
                RemoteMemoryRegion rmr = epScope ? pz.createRmrForEp() : pz.createRmr();
                assertEquals(epScope ? org.jdapl.dat.RmrScope.EP : org.jdapl.dat.RmrScope.PZ, rmr.query().scope());
                assertEquals(DatReturnSubtype.INVALID_STATE_PZ_IN_USE,
                        assertThrows(DatException.class, pz::free).subtype());
                rmr.free();
                assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, rmr::free).type());
            }
        }
        pz.free();
    }

    @Test
    void OBJ_06_pspCreateQueryFreeAndQualifierInUse() {
        EventDispatcher cr = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR));
        long qual = 20_000 + ProcessHandle.current().pid() % 10_000;
        PublicServicePoint psp = ia.createPsp(qual, cr, PspFlag.CONSUMER);
        assertEquals(qual, psp.query().connQual());
        assertEquals(cr, psp.query().evd());
        DatException inUse = assertThrows(DatException.class, () -> ia.createPsp(qual, cr, PspFlag.CONSUMER));
        assertEquals(DatReturnType.CONN_QUAL_IN_USE, inUse.type());
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_IN_USE, assertThrows(DatException.class, cr::free).subtype());
        PublicServicePoint any = ia.createPspAny(cr, PspFlag.CONSUMER);
        assertTrue(any.query().connQual() > 0);
        System.out.println("PSP listening on " + qual + " and (any) " + any.query().connQual());
        psp.free();
        any.free();
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, psp::free).type());
        PublicServicePoint again = ia.createPsp(qual, cr, PspFlag.CONSUMER);
        again.free();
        EventDispatcher noCr = ia.createEvd(4, null, EnumSet.of(EvdFlag.DTO));
        assertEquals(DatReturnType.INVALID_PARAMETER,
                assertThrows(DatException.class, () -> ia.createPsp(qual, noCr, PspFlag.CONSUMER)).type());
        cr.free();
    }

    @Test
    void epCreatesAQueuePairAndPostsNeedAConnection() {
        ProtectionZone pz = ia.createPz();
        EventDispatcher dto = ia.createEvd(64, null, EnumSet.of(EvdFlag.DTO));
        EventDispatcher conn = ia.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
        Endpoint ep = ia.createEp(pz, dto, dto, conn, null);
        assertEquals(EpState.UNCONNECTED, ep.query().state());
        assertEquals(EpState.UNCONNECTED, ep.status().state());
        LocalMemoryRegion lmr = ia.createLmr(pz, arena.allocate(256), Dat.MEM_PRIV_ALL, VaType.VA);
        DatException send = assertThrows(DatException.class,
                () -> ep.postSend(List.of(LmrTriplet.of(lmr)), 7, Dat.COMPLETION_DEFAULT));
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED, send.subtype());
        // A receive may be posted before the connection; freeing the EP drops it with the queue pair.
        ep.postRecv(List.of(LmrTriplet.of(lmr)), 8, Dat.COMPLETION_DEFAULT);
        assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class, () -> ep.connect(
                new java.net.InetSocketAddress(RxeDevice.ADDRESS, 0), 1234, 1_000_000, new byte[57])).type(),
                "over the 56 bytes of an ofa-v2 IA's connect");
        assertEquals(DatReturnType.INVALID_ADDRESS, assertThrows(DatException.class, () -> ep.connect(
                java.net.InetSocketAddress.createUnresolved("nowhere.invalid", 0), 1234, 1_000_000,
                new byte[0])).type());
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED,
                assertThrows(DatException.class, () -> ep.disconnect(org.jdapl.dat.CloseFlag.ABRUPT)).subtype());
        assertEquals(DatReturnSubtype.INVALID_STATE_EVD_IN_USE, assertThrows(DatException.class, dto::free).subtype());
        ep.free();
        assertEquals(DatReturnSubtype.INVALID_HANDLE_EP, assertThrows(DatException.class, ep::query).subtype());
        assertTrue(dto.dequeue().isEmpty(), "an event of a freed EP");
        lmr.free();
        dto.free();
        conn.free();
        pz.free();
    }
}
