package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Datagram endpoints on the device, beyond the conformance kit's EXT_08..EXT_12: the GRH the device
 * writes ahead of a datagram stays out of the consumer's buffer, an address handle is its endpoint's
 * only, and an IA closed with a datagram endpoint holding receives and an unanswered UD request
 * leaves nothing open.
 */
class DatagramDeviceTest {
    private static final long WAIT = 20_000_000;
    private DevicePair pair;
    private InterfaceAdapter a;
    private InterfaceAdapter b;
    private ProtectionZone pa;
    private ProtectionZone pb;
    private EventDispatcher da;
    private EventDispatcher db;
    private Arena arena;

    @BeforeEach
    void open() {
        pair = DevicePair.open();
        a = pair.a;
        b = pair.b;
        pa = pair.pa;
        pb = pair.pb;
        Set<EvdFlag> all = EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR);
        da = a.createEvd(64, null, all);
        db = b.createEvd(64, null, all);
        arena = pair.arena;
    }

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private LocalMemoryRegion lmr(InterfaceAdapter ia, ProtectionZone pz, MemorySegment s) {
        return ia.createLmr(pz, s, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
    }

    @Test
    void EXT_08_theGrhStaysOutOfTheBufferAndAHandleIsItsEndpointsOnly() {
        assertTrue(a.query().provider().offers(ProviderAttributes.DAT_IB_UD), a.query().provider().specific().toString());
        DatagramEndpoint ea = a.createDatagramEp(pa, da, da, da, null);
        DatagramEndpoint eb = b.createDatagramEp(pb, db, db, db, null);
        DatagramEndpoint other = a.createDatagramEp(pa, da, da, da, null);
        PublicServicePoint psp = b.createPspAny(db, PspFlag.CONSUMER);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[] {7});
        DatEvent.UdConnection req = assertInstanceOf(DatEvent.UdConnection.class, db.waitEvent(WAIT));
        assertEquals(EventNumber.IB_UD_CONNECTION_REQUEST, req.number());
        assertArrayEquals(new byte[] {7}, req.privateData());
        req.request().accept(eb, new byte[] {8});
        DatEvent.UdConnection passive = assertInstanceOf(DatEvent.UdConnection.class, db.waitEvent(WAIT));
        assertEquals(ExtensionType.UD_PASSIVE_REMOTE_AH, passive.type());
        DatEvent.UdConnection active = assertInstanceOf(DatEvent.UdConnection.class, da.waitEvent(WAIT));
        assertEquals(EventNumber.IB_UD_CONNECTION_ESTABLISHED, active.number(), active.toString());
        assertArrayEquals(new byte[] {8}, active.privateData());
        assertNotNull(active.remoteAh());
        psp.free();

        // Canaries around the receive: the GRH (40 bytes) lands in the provider's own slot.
        MemorySegment sink = arena.allocate(256, 8);
        sink.fill((byte) 0x5a);
        LocalMemoryRegion lb = lmr(b, pb, sink);
        eb.postRecv(List.of(new LmrTriplet(lb, 64, 100)), 1, Dat.COMPLETION_DEFAULT);
        MemorySegment source = arena.allocate(64, 8);
        source.fill((byte) 0x33);
        LocalMemoryRegion la = lmr(a, pa, source);
        ea.postSendDatagram(active.remoteAh(), List.of(new LmrTriplet(la, 0, 10)), 2, Dat.COMPLETION_DEFAULT);
        DatEvent.ExtendedDtoCompletion sent = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, da.waitEvent(WAIT));
        assertEquals(ExtensionType.UD_SEND, sent.type());
        DatEvent.ExtendedDtoCompletion got = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, db.waitEvent(WAIT));
        assertEquals(DtoStatus.SUCCESS, got.status(), got.toString());
        assertEquals(10, got.transferredLength());
        for (int i = 0; i < 256; i++) {
            byte expected = i >= 64 && i < 74 ? (byte) 0x33 : (byte) 0x5a;
            assertEquals(expected, sink.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "byte " + i);
        }

        DatException foreign = assertThrows(DatException.class, () -> other.postSendDatagram(active.remoteAh(),
                List.of(new LmrTriplet(la, 0, 10)), 3, Dat.COMPLETION_DEFAULT));
        assertEquals(DatReturnType.INVALID_HANDLE, foreign.type());
    }

    @Test
    void EXT_11_theMaximumMessageSizeOfADatagramEndpointIsThePathMtuAtMost() {
        // The provider's defaults (the port's max_msg_sz, more than any MTU) are capped.
        DatagramEndpoint ea = a.createDatagramEp(pa, da, da, da, null);
        long max = ea.query().attributes().maxMessageSize();
        assertTrue(max >= 256 && max <= 4096 && Long.bitCount(max) == 1, "not an MTU: " + max);
        assertEquals(max, ea.maxDatagramSize(), "dat_ep_query and maxDatagramSize agree");
        PublicServicePoint psp = b.createPspAny(db, PspFlag.CONSUMER);
        DatagramEndpoint eb = b.createDatagramEp(pb, db, db, db, null);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
        DatEvent.UdConnection req = assertInstanceOf(DatEvent.UdConnection.class, db.waitEvent(WAIT));
        req.request().accept(eb, new byte[0]);
        assertInstanceOf(DatEvent.UdConnection.class, db.waitEvent(WAIT));
        DatEvent.UdConnection active = assertInstanceOf(DatEvent.UdConnection.class, da.waitEvent(WAIT));
        assertNotNull(active.remoteAh(), active.toString());
        psp.free();
        LocalMemoryRegion la = lmr(a, pa, arena.allocate(max + 1, 8));
        DatException over = assertThrows(DatException.class, () -> ea.postSendDatagram(active.remoteAh(),
                List.of(new LmrTriplet(la, 0, max + 1)), 1, Dat.COMPLETION_DEFAULT));
        assertEquals(DatReturnType.INVALID_PARAMETER, over.type(), over.getMessage());
        // Disconnect ends nothing that an event could report: the receives flush, no connection event comes.
        LocalMemoryRegion lb = lmr(b, pb, arena.allocate(64, 8));
        eb.postRecv(List.of(new LmrTriplet(lb, 0, 64)), 7, Dat.COMPLETION_DEFAULT);
        eb.disconnect(CloseFlag.ABRUPT);
        DatEvent.ExtendedDtoCompletion flushed = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class,
                db.waitEvent(WAIT));
        assertEquals(DtoStatus.FLUSHED, flushed.status(), flushed.toString());
        DatException none = assertThrows(DatException.class, () -> db.waitEvent(200_000));
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, none.type(), "no DISCONNECTED event on a datagram endpoint");
    }

    @Test
    void EXT_12_anIaClosedWithReceivesAndAnUnansweredRequestLeavesNothingOpen() {
        DatagramEndpoint ea = a.createDatagramEp(pa, da, da, da, null);
        DatagramEndpoint eb = b.createDatagramEp(pb, db, db, db, null);
        LocalMemoryRegion lb = lmr(b, pb, arena.allocate(128, 8));
        eb.postRecv(List.of(new LmrTriplet(lb, 0, 64)), 1, Dat.COMPLETION_DEFAULT);
        eb.postRecv(List.of(new LmrTriplet(lb, 64, 64)), 2, Dat.COMPLETION_DEFAULT);
        PublicServicePoint psp = b.createPspAny(db, PspFlag.CONSUMER);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
        DatEvent.UdConnection req = assertInstanceOf(DatEvent.UdConnection.class, db.waitEvent(WAIT));
        assertEquals(EventNumber.IB_UD_CONNECTION_REQUEST, req.number());
        // b closes with the request unanswered: a's exchange ends without an address handle.
        b = pair.reopenB();
        DatEvent.UdConnection ended = assertInstanceOf(DatEvent.UdConnection.class, da.waitEvent(WAIT));
        assertTrue(ended.number() == EventNumber.IB_UD_CONNECTION_ERROR
                || ended.number() == EventNumber.IB_UD_CONNECTION_REJECT, ended.toString());
        assertEquals(null, ended.remoteAh());
    }
}
