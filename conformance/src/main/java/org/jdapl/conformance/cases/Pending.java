package org.jdapl.conformance.cases;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.PublicServicePoint;

/**
 * The start many connection cases share: a fresh IA pair, a PSP of side {@code b} on a fresh
 * qualifier, a fresh EP of side {@code a} connecting to it, and the request at {@code b}'s CR EVD,
 * unanswered.
 *
 * @param a the active side
 * @param b the passive side
 * @param connQual the PSP's qualifier
 * @param psp the PSP
 * @param epA the connecting EP
 * @param cr the request at the passive side
 */
record Pending(Side a, Side b, long connQual, PublicServicePoint psp, Endpoint epA, DatEvent.ConnectionRequest cr) {
    /** Opens a fresh IA pair and connects a fresh EP of the first to a PSP of the second. */
    static Pending open(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        PublicServicePoint psp = b.psp(q);
        Endpoint epA = a.ep();
        return new Pending(a, b, q, psp, epA, b.connectHere(epA, q, new byte[0], "at the passive side"));
    }
}
