package org.jdapl.bench;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.emu.EmuProvider;

/**
 * One IA of the emulated provider with a PZ and its EVDs, as the benchmarks use it.
 *
 * @param ia the IA
 * @param pz its protection zone
 * @param recv the receive EVD
 * @param req the request EVD
 * @param conn the connect EVD
 * @param cr the connection request EVD
 */
record BenchSide(InterfaceAdapter ia, ProtectionZone pz, EventDispatcher recv, EventDispatcher req,
                 EventDispatcher conn, EventDispatcher cr) {
    static final long WAIT = TimeUnit.SECONDS.toMicros(30);

    /** Opens an IA named {@code name} with {@code iaParams} ({@code loopback}, {@code tcp 127.0.0.1:0}). */
    static BenchSide open(EmuProvider p, String name, String iaParams) {
        InterfaceAdapter ia = p.open(new IaSpec(name, iaParams, "", true, "bench"), 16);
        return new BenchSide(ia, ia.createPz(), ia.createEvd(4096, null, EnumSet.of(EvdFlag.DTO)),
                ia.createEvd(4096, null, EnumSet.of(EvdFlag.DTO, EvdFlag.RMR_BIND)),
                ia.createEvd(16, null, EnumSet.of(EvdFlag.CONNECTION)),
                ia.createEvd(16, null, EnumSet.of(EvdFlag.CR)));
    }

    Endpoint ep() {
        return ia.createEp(pz, recv, req, conn, EpAttributes.defaults().withQueueDepths(1024, 1024));
    }

    LocalMemoryRegion lmr(MemorySegment s) {
        return ia.createLmr(pz, s, Dat.MEM_PRIV_ALL, VaType.VA);
    }

    /** Connects an EP of {@code a} to one of {@code b}: the two ends, {@code a}'s first. */
    static Endpoint[] connect(BenchSide a, BenchSide b) {
        PublicServicePoint psp = b.ia.createPspAny(b.cr, PspFlag.CONSUMER);
        Endpoint epA = a.ep();
        Endpoint epB = b.ep();
        epA.connect(b.ia.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
        DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) b.cr.waitEvent(WAIT);
        cr.request().accept(epB, new byte[0]);
        expect(b.conn.waitEvent(WAIT), EventNumber.CONNECTION_ESTABLISHED);
        expect(a.conn.waitEvent(WAIT), EventNumber.CONNECTION_ESTABLISHED);
        psp.free();
        return new Endpoint[] {epA, epB};
    }

    static void expect(DatEvent e, EventNumber n) {
        if (!(e instanceof DatEvent.Connection c) || c.number() != n) {
            throw new IllegalStateException("expected " + n + " but got " + e);
        }
    }

    /** Fails unless {@code slot} holds a successful DTO completion. */
    static void success(EventSlot slot) {
        if (!slot.isDtoCompletion() || slot.status() != DtoStatus.SUCCESS) {
            throw new IllegalStateException("a DTO failed: " + slot);
        }
    }

    static void success(DatEvent e) {
        if (!(e instanceof DatEvent.DtoCompletion d) || d.status() != DtoStatus.SUCCESS) {
            throw new IllegalStateException("a DTO failed: " + e);
        }
    }
}
