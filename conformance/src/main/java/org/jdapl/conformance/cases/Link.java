package org.jdapl.conformance.cases;

import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;

/**
 * A connection between an active EP on side {@code a} and a passive EP on side {@code b}, made
 * through a PSP that is freed once the connection is established.
 *
 * @param a the active side
 * @param b the passive side
 * @param epA the active EP
 * @param epB the passive EP
 */
public record Link(Side a, Side b, Endpoint epA, Endpoint epB) {
    /** Opens a fresh IA pair and connects two fresh EPs. */
    public static Link open(Rig rig) {
        Side[] s = rig.pair();
        return connect(s[0], s[1]);
    }

    /** Connects fresh EPs of the two sides. */
    public static Link connect(Side a, Side b) {
        return connect(a, b, a.ep(), b.ep());
    }

    /**
     * Connects {@code epA} of side {@code a} to {@code epB} of side {@code b}: a PSP on a fresh
     * qualifier, connect, accept, ESTABLISHED on both connect EVDs; the PSP is freed. The EPs'
     * connect EVDs must be those given as {@code a.connEvd} and {@code b.connEvd} or shared EVDs
     * passed as {@code connEvdA} and {@code connEvdB}.
     */
    public static Link connect(Side a, Side b, Endpoint epA, Endpoint epB) {
        Rig rig = a.rig;
        long q = rig.connQual();
        PublicServicePoint psp = b.psp(q);
        try {
            var cr = b.connectHere(epA, q, new byte[0], "at the passive side");
            cr.request().accept(epB, new byte[0]);
            Events.connection(epB.query().connectEvd(), EventNumber.CONNECTION_ESTABLISHED, epB,
                    rig.eventTimeout(), "at the passive side");
            Events.connection(epA.query().connectEvd(), EventNumber.CONNECTION_ESTABLISHED, epA,
                    rig.eventTimeout(), "at the active side");
        } finally {
            psp.free();
        }
        return new Link(a, b, epA, epB);
    }

    /** The RMR triplet naming {@code length} bytes at {@code offset} of a VA-addressed LMR. */
    public static RmrTriplet remote(LocalMemoryRegion lmr, long offset, long length) {
        var p = lmr.query();
        return new RmrTriplet(p.rmrContext(), p.registeredAddress() + offset, length);
    }

    /** The LMR triplet naming {@code length} bytes at {@code offset}. */
    public static LmrTriplet local(LocalMemoryRegion lmr, long offset, long length) {
        return new LmrTriplet(lmr, offset, length);
    }
}
