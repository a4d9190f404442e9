package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
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
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** rdma_cm connections and data transfer between two IAs on the device. */
class ConnectionDeviceTest {
    private static final long WAIT = 10_000_000;
    private DevicePair pair;
    private InterfaceAdapter a;
    private InterfaceAdapter b;
    private Arena arena;

    @BeforeEach
    void open() {
        pair = DevicePair.open();
        a = pair.a;
        b = pair.b;
        arena = pair.arena;
    }

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private record Ends(Endpoint ea, Endpoint eb, EventDispatcher da, EventDispatcher db, ProtectionZone pa,
                        ProtectionZone pb) {
    }

    /** Connects an EP of each IA (one EVD per side for every stream); returns them ESTABLISHED. */
    private Ends connect(byte[] requestData, byte[] acceptData) {
        DevicePair.Connected c = pair.connect(256,
                EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR, EvdFlag.RMR_BIND), requestData, acceptData, WAIT);
        assertEquals(EpState.ACTIVE_CONNECTION_PENDING, c.stateAfterConnect());
        assertOfedPadded(requestData, 56, c.request().privateData());
        assertEquals(c.ea().query().localPortQual(), c.request().remotePortQual());
        assertOfedPadded(acceptData, 196, c.establishedA().privateData());
        return new Ends(c.ea(), c.eb(), c.da(), c.db(), pair.pa, pair.pb);
    }

    private static DatEvent.DtoCompletion dto(EventDispatcher evd) {
        return assertInstanceOf(DatEvent.DtoCompletion.class, evd.waitEvent(WAIT));
    }

    @Test
    void CONN_03_connectAcceptSendReceiveRdmaAndGracefulDisconnect() {
        Ends e = connect(new byte[] {1, 2, 3}, new byte[] {9, 8});
        MemorySegment sa = arena.allocate(8192, 4096);
        MemorySegment sb = arena.allocate(8192, 4096);
        for (int i = 0; i < 4096; i++) {
            sa.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        LocalMemoryRegion la = a.createLmr(e.pa, sa, Dat.MEM_PRIV_ALL, VaType.VA);
        LocalMemoryRegion lb = b.createLmr(e.pb, sb, Dat.MEM_PRIV_ALL, VaType.VA);
        e.eb.postRecv(List.of(new LmrTriplet(lb, 0, 1000)), 11, Dat.COMPLETION_DEFAULT);
        e.ea.postSend(List.of(new LmrTriplet(la, 0, 1000)), 12, Dat.COMPLETION_DEFAULT);
        DatEvent.DtoCompletion sent = dto(e.da);
        assertEquals(12, sent.cookie());
        assertEquals(DtoStatus.SUCCESS, sent.status());
        DatEvent.DtoCompletion got = dto(e.db);
        assertEquals(11, got.cookie());
        assertEquals(1000, got.transferredLength());
        assertEquals(DtoOperation.RECEIVE, got.operation());
        assertEquals(sa.asSlice(0, 1000).mismatch(sb.asSlice(0, 1000)), -1);
        var q = lb.query();
        e.ea.postRdmaWrite(List.of(new LmrTriplet(la, 0, 4096)), 13,
                new RmrTriplet(q.rmrContext(), q.registeredAddress() + 4096, 4096), EnumSet.of(CompletionFlag.SUPPRESS));
        e.ea.postRdmaRead(List.of(new LmrTriplet(la, 4096, 4096)), 14,
                new RmrTriplet(q.rmrContext(), q.registeredAddress() + 4096, 4096), Dat.COMPLETION_DEFAULT);
        DatEvent.DtoCompletion read = dto(e.da);
        assertEquals(14, read.cookie(), "the suppressed write reports nothing; the read follows it");
        assertEquals(DtoOperation.RDMA_READ, read.operation());
        assertEquals(sa.asSlice(0, 4096).mismatch(sa.asSlice(4096, 4096)), -1);
        e.ea.disconnect(CloseFlag.GRACEFUL);
        DatEvent.Connection discA = assertInstanceOf(DatEvent.Connection.class, e.da.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, discA.number());
        DatEvent.Connection discB = assertInstanceOf(DatEvent.Connection.class, e.db.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, discB.number());
        assertEquals(EpState.DISCONNECTED, e.ea.query().state());
        e.ea.reset();
        assertEquals(EpState.UNCONNECTED, e.ea.query().state());
        System.out.println("connected over rdma_cm, moved 1000 B by send, 4 KiB by RDMA Write and Read,"
                + " disconnected gracefully and reset");
    }

    @Test
    void DISC_02_abruptDisconnectAfterSuppressedSendsEndsOnBothSides() {
        // OFED's dtest ends so: its last messages are sent with DAT_COMPLETION_SUPPRESS_FLAG, then the
        // client disconnects abruptly. The sends completed unsignalled; DISCONNECTED must still come.
        Ends e = connect(new byte[0], new byte[0]);
        MemorySegment sa = arena.allocate(4096, 4096);
        MemorySegment sb = arena.allocate(4096 * 4, 4096);
        LocalMemoryRegion la = a.createLmr(e.pa, sa, Dat.MEM_PRIV_ALL, VaType.VA);
        LocalMemoryRegion lb = b.createLmr(e.pb, sb, Dat.MEM_PRIV_ALL, VaType.VA);
        for (int i = 0; i < 3; i++) {
            e.eb.postRecv(List.of(new LmrTriplet(lb, 4096L * i, 64)), 20 + i, Dat.COMPLETION_DEFAULT);
        }
        for (int i = 0; i < 3; i++) {
            e.ea.postSend(List.of(new LmrTriplet(la, 0, 64)), 30 + i, EnumSet.of(CompletionFlag.SUPPRESS));
        }
        for (int i = 0; i < 3; i++) {
            DatEvent.DtoCompletion got = dto(e.db);
            assertEquals(20 + i, got.cookie());
            assertEquals(DtoStatus.SUCCESS, got.status());
        }
        e.ea.disconnect(CloseFlag.ABRUPT);
        DatEvent.Connection discA = assertInstanceOf(DatEvent.Connection.class, e.da.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, discA.number(), "no send is reported: they were suppressed");
        DatEvent.Connection discB = assertInstanceOf(DatEvent.Connection.class, e.db.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, discB.number());
    }

    @Test
    void DISC_04_gracefulDisconnectAfterOnlySuppressedSendsCompletes() {
        // Every outstanding request is unsignalled: the device reports none of them, so the graceful
        // disconnect would wait for them for ever unless the provider makes the last one signalled.
        Ends e = connect(new byte[0], new byte[0]);
        MemorySegment sa = arena.allocate(4096, 4096);
        MemorySegment sb = arena.allocate(4096 * 4, 4096);
        for (int i = 0; i < 3 * 64; i++) {
            sa.set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
        }
        LocalMemoryRegion la = a.createLmr(e.pa, sa, Dat.MEM_PRIV_ALL, VaType.VA);
        LocalMemoryRegion lb = b.createLmr(e.pb, sb, Dat.MEM_PRIV_ALL, VaType.VA);
        for (int i = 0; i < 3; i++) {
            e.eb.postRecv(List.of(new LmrTriplet(lb, 4096L * i, 64)), 40 + i, Dat.COMPLETION_DEFAULT);
        }
        for (int i = 0; i < 3; i++) {
            e.ea.postSend(List.of(new LmrTriplet(la, 64L * i, 64)), 50 + i, EnumSet.of(CompletionFlag.SUPPRESS));
        }
        e.ea.disconnect(CloseFlag.GRACEFUL);
        EpState pending = e.ea.query().state();
        assertTrue(pending == EpState.DISCONNECT_PENDING || pending == EpState.DISCONNECTED, pending.toString());
        DatEvent.Connection discA = assertInstanceOf(DatEvent.Connection.class, e.da.waitEvent(WAIT),
                "the graceful disconnect completes within 10 s; the suppressed sends report nothing");
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, discA.number());
        assertEquals(EpState.DISCONNECTED, e.ea.query().state());
        for (int i = 0; i < 3; i++) {
            DatEvent.DtoCompletion got = dto(e.db);
            assertEquals(40 + i, got.cookie());
            assertEquals(DtoStatus.SUCCESS, got.status(), "the sends completed before the DREQ went out");
            assertEquals(64, got.transferredLength());
            assertEquals(-1, sa.asSlice(64L * i, 64).mismatch(sb.asSlice(4096L * i, 64)));
        }
        DatEvent.Connection discB = assertInstanceOf(DatEvent.Connection.class, e.db.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, discB.number());
        assertTrue(e.da.dequeue().isEmpty(), "exactly one event on the active side");
        e.ea.reset();
        assertEquals(EpState.UNCONNECTED, e.ea.query().state());
    }

    @Test
    void CONN_04_rejectWithPrivateDataAndCONN_05_nobodyListening() {
        ProtectionZone pa = a.createPz();
        EventDispatcher da = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION));
        EventDispatcher cr = b.createEvd(16, null, EnumSet.of(EvdFlag.CR));
        PublicServicePoint psp = b.createPspAny(cr, PspFlag.CONSUMER);
        Endpoint ea = a.createEp(pa, da, da, da, null);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
        DatEvent.ConnectionRequest req = assertInstanceOf(DatEvent.ConnectionRequest.class, cr.waitEvent(WAIT));
        req.request().reject(new byte[] {42});
        DatEvent.Connection rej = assertInstanceOf(DatEvent.Connection.class, da.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_PEER_REJECTED, rej.number());
        // ofa-v2-* IAs speak OFED's wire: the REJ's whole buffer (148 bytes) less dapl_pdata_hdr
        assertOfedPadded(new byte[] {42}, 144, rej.privateData());
        assertEquals(EpState.DISCONNECTED, ea.query().state());
        long unused = psp.query().connQual();
        psp.free();
        Endpoint e2 = a.createEp(pa, da, da, da, null);
        e2.connect(b.query().attributes().address(), unused, WAIT, new byte[0]);
        DatEvent.Connection none = assertInstanceOf(DatEvent.Connection.class, da.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_NON_PEER_REJECTED, none.number());
    }

    @Test
    void DISC_11_FREE_02_providerCreatedEpGetsItsQueuePairAtAcceptAndCarriesData() {
        ProtectionZone pa = a.createPz();
        ProtectionZone pb = b.createPz();
        Set<EvdFlag> all = EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR, EvdFlag.RMR_BIND);
        EventDispatcher da = a.createEvd(64, null, all);
        EventDispatcher db = b.createEvd(64, null, all);
        PublicServicePoint psp = b.createPspAny(db, PspFlag.PROVIDER);
        assertTrue(b.query().provider().pspCreatesEp());
        Endpoint ea = a.createEp(pa, da, da, da, null);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[] {5});
        DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, db.waitEvent(WAIT));
        Endpoint eb = cr.request().query().localEp();
        assertEquals(EpState.TENTATIVE_CONNECTION_PENDING, eb.query().state());
        assertNull(eb.query().pz(), "a provider-created EP has no PZ until the consumer gives it one");
        assertEquals(DatReturnType.INVALID_STATE, assertThrows(DatException.class, () -> eb.disconnect(CloseFlag.ABRUPT)).type());
        assertEquals(DatReturnType.INVALID_STATE, assertThrows(DatException.class, eb::free).type());
        assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                () -> cr.request().accept(null, new byte[0])).type(), "accept before the EP has a PZ");
        eb.modify(pb, null, db, db, db);
        assertEquals(pb, eb.query().pz());
        cr.request().accept(null, new byte[] {6});
        assertEquals(EventNumber.CONNECTION_ESTABLISHED,
                assertInstanceOf(DatEvent.Connection.class, db.waitEvent(WAIT)).number());
        DatEvent.Connection estA = assertInstanceOf(DatEvent.Connection.class, da.waitEvent(WAIT));
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, estA.number());
        assertOfedPadded(new byte[] {6}, 196, estA.privateData());
        MemorySegment sa = arena.allocate(4096);
        MemorySegment sb = arena.allocate(4096);
        sa.fill((byte) 7);
        LocalMemoryRegion la = a.createLmr(pa, sa, Dat.MEM_PRIV_ALL, VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, sb, Dat.MEM_PRIV_ALL, VaType.VA);
        eb.postRecv(List.of(new LmrTriplet(lb, 0, 100)), 1, Dat.COMPLETION_DEFAULT);
        ea.postSend(List.of(new LmrTriplet(la, 0, 100)), 2, Dat.COMPLETION_DEFAULT);
        assertEquals(DtoStatus.SUCCESS, dto(da).status());
        assertEquals(100, dto(db).transferredLength());
        assertEquals(-1, sa.asSlice(0, 100).mismatch(sb.asSlice(0, 100)));
        ea.disconnect(CloseFlag.ABRUPT);
        assertEquals(EventNumber.CONNECTION_DISCONNECTED,
                assertInstanceOf(DatEvent.Connection.class, da.waitEvent(WAIT)).number());
        assertEquals(EventNumber.CONNECTION_DISCONNECTED,
                assertInstanceOf(DatEvent.Connection.class, db.waitEvent(WAIT)).number());
        psp.free();
        System.out.println("a PROVIDER PSP's EP: TENTATIVE without a queue pair, PZ and EVDs by dat_ep_modify,"
                + " queue pair at accept, 100 B sent to it");
    }

    @Test
    void LMR_06_remoteWriteOneBytePastABoundRmrFailsOnTheWire() {
        Ends e = connect(new byte[0], new byte[0]);
        MemorySegment target = arena.allocate(8192, 4096);
        target.fill((byte) 0x11);
        LocalMemoryRegion lb = b.createLmr(e.pb, target, Dat.MEM_PRIV_ALL, VaType.VA);
        RemoteMemoryRegion rmr = e.pb.createRmr();
        int ctx = rmr.bind(lb, 1024, 1024, Set.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE, MemPriv.REMOTE_WRITE,
                MemPriv.REMOTE_READ), VaType.VA, e.eb, 3, Dat.COMPLETION_DEFAULT);
        DatEvent.RmrBindCompletion bound = assertInstanceOf(DatEvent.RmrBindCompletion.class, e.db.waitEvent(WAIT));
        assertEquals(DtoStatus.SUCCESS, bound.status());
        assertEquals(ctx, rmr.query().rmrContext());
        MemorySegment src = arena.allocate(4096);
        src.fill((byte) 0x22);
        LocalMemoryRegion la = a.createLmr(e.pa, src, Dat.MEM_PRIV_ALL, VaType.VA);
        long base = target.address() + 1024;
        e.ea.postRdmaWrite(List.of(new LmrTriplet(la, 0, 1024)), 4, new RmrTriplet(ctx, base, 1024),
                Dat.COMPLETION_DEFAULT);
        assertEquals(DtoStatus.SUCCESS, dto(e.da).status(), "a write of the whole RMR");
        assertEquals(-1, target.asSlice(1024, 1024).mismatch(src.asSlice(0, 1024)));
        e.ea.postRdmaWrite(List.of(new LmrTriplet(la, 0, 1024)), 5, new RmrTriplet(ctx, base + 1, 1024),
                Dat.COMPLETION_DEFAULT);
        DatEvent.DtoCompletion past = dto(e.da);
        assertEquals(5, past.cookie());
        assertEquals(DtoStatus.REMOTE_ACCESS, past.status(), "a write one byte past the RMR's end");
        for (int i = 0; i < 1024; i++) {
            assertEquals((byte) 0x11, target.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " before the RMR");
            assertEquals((byte) 0x11, target.get(ValueLayout.JAVA_BYTE, 2048 + i), "byte " + (2048 + i) + " after it");
        }
        assertEquals(EventNumber.CONNECTION_BROKEN,
                assertInstanceOf(DatEvent.Connection.class, e.da.waitEvent(WAIT)).number());
        System.out.println("RMR " + (b.query().provider().specific().get("rmr")) + ": a write of its 1024 B passed,"
                + " one byte past it failed REMOTE_ACCESS on the wire and wrote nothing");
    }

    /**
     * The provider's choice of RMR backing matches what the device does (LMR_06): with the device's
     * own windows forced on, a window is bound over 1 KiB of a region and written one byte past its
     * end. If the device lets that write through, the provider must not use its windows (it uses
     * registrations of the bound range); if the device refuses it, the provider must use them.
     */
    @Test
    void LMR_06_theDeviceWindowsAreUsedExactlyWhereTheDeviceChecksTheirBounds() {
        var specific = a.query().attributes().specific();
        boolean providerTrusts = specific.get("mw_refused") == null;
        String previous = System.getProperty("jdapl.ofa.softwareMemoryWindows");
        System.setProperty("jdapl.ofa.softwareMemoryWindows", "true");
        try {
            org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.parseBoolean(
                    a.query().attributes().specific().get("mw_type1")), "the device has no memory windows");
            Ends e = connect(new byte[0], new byte[0]);
            MemorySegment target = arena.allocate(4096, 4096);
            target.fill((byte) 0x11);
            LocalMemoryRegion lb = b.createLmr(e.pb, target, Dat.MEM_PRIV_ALL, VaType.VA);
            RemoteMemoryRegion window = e.pb.createRmr();
            int ctx = window.bind(lb, 1024, 1024, Dat.MEM_PRIV_ALL, VaType.VA, e.eb, 1, Dat.COMPLETION_DEFAULT);
            assertEquals(DtoStatus.SUCCESS,
                    assertInstanceOf(DatEvent.RmrBindCompletion.class, e.db.waitEvent(WAIT)).status());
            LocalMemoryRegion la = a.createLmr(e.pa, arena.allocate(64), Dat.MEM_PRIV_ALL, VaType.VA);
            e.ea.postRdmaWrite(List.of(new LmrTriplet(la, 0, 1)), 2,
                    new RmrTriplet(ctx, target.address() + 2048, 1), Dat.COMPLETION_DEFAULT);
            DtoStatus status = dto(e.da).status();
            boolean deviceChecks = status != DtoStatus.SUCCESS;
            System.out.println("device windows on " + System.getProperty("os.version") + ": a write one byte past a"
                    + " bound window " + (deviceChecks ? "failed " + status : "passed (the device does not check"
                    + " window bounds)") + "; the provider " + (providerTrusts ? "uses" : "does not use") + " them");
            assertEquals(deviceChecks, providerTrusts, "the provider's use of the device's windows");
        } finally {
            if (previous == null) {
                System.clearProperty("jdapl.ofa.softwareMemoryWindows");
            } else {
                System.setProperty("jdapl.ofa.softwareMemoryWindows", previous);
            }
        }
    }

    /**
     * CONN_10, CONN_13 on an ofa-v2-* IA (OFED's wire): the receiver gets rdma_cm's whole private data
     * buffer of the message ({@code length} bytes on RoCE), the sender's bytes first, then zeros.
     */
    private static void assertOfedPadded(byte[] sent, int length, byte[] received) {
        byte[] expected = java.util.Arrays.copyOf(sent, length);
        assertArrayEquals(expected, received);
    }
}
