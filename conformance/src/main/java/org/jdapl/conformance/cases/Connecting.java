package org.jdapl.conformance.cases;

import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;

/** Steps several cases share around connection establishment. */
final class Connecting {
    private Connecting() {
    }

    /**
     * Accepts a request whose active side has given up (timed out, disconnected, freed) and checks
     * that the accept fails: either sync (the EP stays UNCONNECTED) or with ACCEPT_COMPLETION_ERROR
     * (the EP ends DISCONNECTED), never ESTABLISHED; no further connection event follows.
     */
    static void lateAcceptFails(Side b, ConnectionRequest cr, String what) {
        Rig rig = b.rig;
        Endpoint epB = b.ep();
        DatException sync = Checks.attempt("a late accept " + what, () -> cr.accept(epB, new byte[0]));
        if (sync != null) {
            Checks.state(epB, EpState.UNCONNECTED, "the passive EP after a late accept failed sync " + what);
        } else {
            Events.connection(b.connEvd, EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, epB, rig.eventTimeout(),
                    "at the passive side after a late accept " + what);
            Checks.state(epB, EpState.DISCONNECTED, "the passive EP after ACCEPT_COMPLETION_ERROR " + what);
        }
        Events.none(b.connEvd, rig.grace(), "at the passive side after the late accept " + what);
    }
}
