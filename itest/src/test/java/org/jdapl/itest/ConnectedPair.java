package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.Dat;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;

/**
 * Two IAs opened by name through the registry, an EP of each connected to the other (the active
 * side to a PSP of the passive side), and a receive posted on each, so that a break shows on every
 * event stream: the asynchronous EVDs, the connect EVDs and the receive EVDs.
 */
final class ConnectedPair implements AutoCloseable {
    static final long WAIT_MICROS = TimeUnit.SECONDS.toMicros(10);

    final Side active;
    final Side passive;
    final PublicServicePoint psp;
    final EventDispatcher crEvd;
    private final Arena arena = Arena.ofShared();

    /** One side: its IA and the objects made on it. */
    static final class Side {
        final InterfaceAdapter ia;
        final ProtectionZone pz;
        final EventDispatcher connEvd;
        final EventDispatcher recvEvd;
        final Endpoint ep;
        final LocalMemoryRegion lmr;

        Side(InterfaceAdapter ia, Arena arena) {
            this.ia = ia;
            pz = ia.createPz();
            connEvd = ia.createEvd(8, null, Set.of(EvdFlag.CONNECTION));
            recvEvd = ia.createEvd(8, null, Set.of(EvdFlag.DTO));
            ep = ia.createEp(pz, recvEvd, recvEvd, connEvd, null);
            lmr = ia.createLmr(pz, arena.allocate(4096), Dat.MEM_PRIV_ALL, VaType.VA);
        }

        EventDispatcher asyncEvd() {
            return ia.query().asyncEvd();
        }

        /** Every handle of this side, the IA last. */
        List<DatHandle> handles() {
            return List.of(ep, lmr, recvEvd, connEvd, pz, ia);
        }
    }

    private ConnectedPair(InterfaceAdapter first, InterfaceAdapter second) {
        active = new Side(first, arena);
        passive = new Side(second, arena);
        crEvd = second.createEvd(8, null, Set.of(EvdFlag.CR));
        psp = second.createPspAny(crEvd, PspFlag.CONSUMER);
    }

    /** Opens {@code iaName} twice through {@code registry} and connects the two. */
    static ConnectedPair open(DatRegistry registry, String iaName) {
        InterfaceAdapter first = registry.open(iaName, 16);
        InterfaceAdapter second;
        try {
            second = registry.open(iaName, 16);
        } catch (RuntimeException e) {
            first.close();
            throw e;
        }
        ConnectedPair pair = new ConnectedPair(first, second);
        try {
            pair.connect();
            return pair;
        } catch (RuntimeException | Error e) {
            pair.close();
            throw e;
        }
    }

    private void connect() {
        active.ep.postRecv(List.of(new LmrTriplet(active.lmr, 0, 1024)), 1, Dat.COMPLETION_DEFAULT);
        active.ep.connect(passive.ia.query().attributes().address(), psp.query().connQual(), WAIT_MICROS, new byte[0]);
        DatEvent request = crEvd.waitEvent(WAIT_MICROS);
        assertTrue("a connection request: " + request, request instanceof DatEvent.ConnectionRequest);
        passive.ep.postRecv(List.of(new LmrTriplet(passive.lmr, 0, 1024)), 2, Dat.COMPLETION_DEFAULT);
        ((DatEvent.ConnectionRequest) request).request().accept(passive.ep, new byte[0]);
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, passive.connEvd.waitEvent(WAIT_MICROS).number());
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, active.connEvd.waitEvent(WAIT_MICROS).number());
        assertEquals(EpState.CONNECTED, active.ep.query().state());
        assertEquals(EpState.CONNECTED, passive.ep.query().state());
    }

    /** Every handle of the pair, the IAs last. */
    List<DatHandle> handles() {
        List<DatHandle> all = new ArrayList<>();
        all.add(psp);
        all.add(crEvd);
        all.addAll(active.handles());
        all.addAll(passive.handles());
        return all;
    }

    /** Closes both IAs (abrupt; an IA already broken is left alone) and frees the memory. */
    @Override
    public void close() {
        try {
            if (!active.ia.isFreed()) {
                active.ia.close();
            }
        } finally {
            try {
                if (!passive.ia.isFreed()) {
                    passive.ia.close();
                }
            } finally {
                arena.close();
            }
        }
    }
}
