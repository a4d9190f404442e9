package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;

/** Two emulated IAs with one EVD each (serving every stream) and helpers to connect EPs between them. */
final class Fixture implements AutoCloseable {
    static final long WAIT = 5_000_000L;

    final EmuProvider provider = new EmuProvider();
    final Arena arena = Arena.ofShared();
    final Side a;
    final Side b;

    /** One IA with a PZ and one EVD for every stream. */
    static final class Side {
        final InterfaceAdapter ia;
        final ProtectionZone pz;
        final EventDispatcher evd;

        Side(InterfaceAdapter ia, int qlen) {
            this.ia = ia;
            this.pz = ia.createPz();
            this.evd = ia.createEvd(qlen, null, Dat.EVD_DEFAULT_FLAGS);
        }

        Endpoint ep() {
            return ia.createEp(pz, evd, evd, evd, EpAttributes.defaults());
        }

        LocalMemoryRegion lmr(MemorySegment segment) {
            return ia.createLmr(pz, segment, Dat.MEM_PRIV_ALL, VaType.VA);
        }

        DatEvent next() {
            return evd.waitEvent(WAIT);
        }

        DatEvent.Connection nextConnection(EventNumber expected) {
            DatEvent e = next();
            DatEvent.Connection c = assertInstanceOf(DatEvent.Connection.class, e, () -> "got " + e);
            assertEquals(expected, c.number(), () -> "got " + e);
            return c;
        }

        DatEvent.Connection nextConnectionSkippingDtos(EventNumber expected) {
            DatEvent e;
            do {
                e = next();
            } while (e instanceof DatEvent.DtoCompletion);
            DatEvent got = e;
            DatEvent.Connection c = assertInstanceOf(DatEvent.Connection.class, got, () -> "got " + got);
            assertEquals(expected, c.number());
            return c;
        }

        DatEvent.DtoCompletion nextDto() {
            DatEvent e = next();
            return assertInstanceOf(DatEvent.DtoCompletion.class, e, () -> "got " + e);
        }
    }

    Fixture() {
        this(1024);
    }

    Fixture(int qlen) {
        this("loopback a", "loopback", qlen);
    }

    /** Two IAs with the given ia_params (e.g. {@code tcp 127.0.0.1:0}). */
    Fixture(String paramsA, String paramsB, int qlen) {
        a = new Side(provider.open(new IaSpec("emuA", paramsA, "", true, "test"), 16), qlen);
        b = new Side(provider.open(new IaSpec("emuB", paramsB, "", true, "test"), 16), qlen);
    }

    /** Two IAs on the tcp fabric of 127.0.0.1. */
    static Fixture tcp() {
        return new Fixture("tcp 127.0.0.1:0", "tcp 127.0.0.1:0", 1024);
    }

    MemorySegment memory(long size) {
        return arena.allocate(size, 64);
    }

    static List<LmrTriplet> iov(LocalMemoryRegion lmr, long offset, long length) {
        return List.of(new LmrTriplet(lmr, offset, length));
    }

    /** Connects a new EP of A to a new EP of B; returns {active, passive}. */
    Endpoint[] connect() {
        Endpoint active = a.ep();
        Endpoint passive = b.ep();
        connect(active, passive, new byte[0]);
        return new Endpoint[] {active, passive};
    }

    void connect(Endpoint active, Endpoint passive, byte[] privateData) {
        PublicServicePoint psp = b.ia.createPspAny(b.evd, PspFlag.CONSUMER);
        long qual = psp.query().connQual();
        active.connect(b.ia.query().attributes().address(), qual, WAIT, privateData);
        DatEvent e = b.next();
        DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, e, () -> "got " + e);
        cr.request().accept(passive, new byte[0]);
        psp.free();
        b.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
        a.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
        assertEquals(EpState.CONNECTED, active.query().state());
        assertEquals(EpState.CONNECTED, passive.query().state());
    }

    /**
     * Disconnects a connected pair abruptly from the active side with a receive posted at the passive
     * one: the active side reports DISCONNECTED, the receive is flushed, then the passive side reports
     * DISCONNECTED (DISC_02, DISC_13).
     */
    void abruptDisconnectFlushesThePeer(Endpoint[] eps) {
        eps[1].postRecv(iov(b.lmr(memory(64)), 0, 64), 7, none());
        eps[0].disconnect(org.jdapl.dat.CloseFlag.ABRUPT);
        a.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
        DatEvent.DtoCompletion flushed = b.nextDto();
        assertEquals(org.jdapl.dat.DtoStatus.FLUSHED, flushed.status());
        assertEquals(7, flushed.cookie());
        b.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
    }

    static Set<org.jdapl.dat.CompletionFlag> none() {
        return Set.of();
    }

    @Override
    public void close() {
        a.ia.close();
        b.ia.close();
        arena.close();
    }
}
