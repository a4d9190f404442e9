package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.Set;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * Two IAs of one provider on the Soft-RoCE device, a PZ on each and a shared arena: what the device
 * tests that talk from one IA to the other start with; {@link #close} closes both IAs and checks
 * that nothing of the provider is left open. {@link #connect} connects an EP of each.
 */
final class DevicePair {
    final OfaProvider provider = new OfaProvider();
    final InterfaceAdapter a;
    /** IA b; {@link #reopenB} replaces it. */
    InterfaceAdapter b;
    final ProtectionZone pa;
    final ProtectionZone pb;
    final Arena arena = Arena.ofShared();

    private DevicePair() {
        a = RxeDevice.open(provider);
        b = RxeDevice.open(provider);
        pa = a.createPz();
        pb = b.createPz();
    }

    /** Opens the pair (skips the test where there is no device). */
    static DevicePair open() {
        return new DevicePair();
    }

    /** IA b closed (whatever it holds goes) and opened afresh. */
    InterfaceAdapter reopenB() {
        b.close();
        b = RxeDevice.open(provider);
        return b;
    }

    /** Closes both IAs and the arena; fails if anything of the provider is still open. */
    void close() {
        try {
            a.close();
            b.close();
            assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
        } finally {
            arena.close();
        }
    }

    /**
     * A connection between an EP of IA a and one of IA b: the EPs, their EVDs (one a side for every
     * stream), the request b got as it queried it before the accept, a's state right after
     * {@code dat_ep_connect} returned, and a's ESTABLISHED event.
     */
    record Connected(Endpoint ea, Endpoint eb, EventDispatcher da, EventDispatcher db,
                     ConnectionRequest.CrParam request, EpState stateAfterConnect, DatEvent.Connection establishedA) {
    }

    /**
     * Connects an EP of each IA through a PSP of b (freed once connected), with EVDs of {@code qlen}
     * for {@code streams}; both sides ESTABLISHED.
     */
    Connected connect(int qlen, Set<EvdFlag> streams, byte[] requestData, byte[] acceptData, long waitMicros) {
        return connect(a.createEvd(qlen, null, streams), b.createEvd(qlen, null, streams), requestData, acceptData,
                waitMicros);
    }

    /** As {@link #connect(int, Set, byte[], byte[], long)}, on EVDs {@code da} of a and {@code db} of b. */
    Connected connect(EventDispatcher da, EventDispatcher db, byte[] requestData, byte[] acceptData,
                      long waitMicros) {
        Endpoint ea = a.createEp(pa, da, da, da, null);
        Endpoint eb = b.createEp(pb, db, db, db, null);
        PublicServicePoint psp = b.createPspAny(db, PspFlag.CONSUMER);
        ea.connect(b.query().attributes().address(), psp.query().connQual(), waitMicros, requestData);
        EpState pending = ea.query().state();
        DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, db.waitEvent(waitMicros));
        ConnectionRequest.CrParam request = cr.request().query();
        cr.request().accept(eb, acceptData);
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, assertInstanceOf(DatEvent.Connection.class,
                db.waitEvent(waitMicros)).number());
        DatEvent.Connection estA = assertInstanceOf(DatEvent.Connection.class, da.waitEvent(waitMicros));
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, estA.number());
        psp.free();
        return new Connected(ea, eb, da, db, request, pending, estA);
    }
}
