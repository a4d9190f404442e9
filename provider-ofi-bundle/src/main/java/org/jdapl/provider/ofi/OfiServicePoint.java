package org.jdapl.provider.ofi;

import java.util.function.Function;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ServicePoint;

/**
 * What a PSP and an RSP share on either kind of libfabric endpoint: the EVD its requests go to, the
 * connection qualifier it listens on and the {@link Listener} that listens (a passive endpoint,
 * {@link OfiListener}, or a control endpoint of the RDM protocol, {@link RdmListener}; the IA's
 * endpoint type picks it). Each request becomes a CR the listener makes and a CONNECTION_REQUEST
 * event on the EVD. Freeing the service point closes its listener.
 *
 * <p>Behaviours: OBJ_06, CONN_11.
 */
abstract class OfiServicePoint extends OfiObject implements ServicePoint {
    /** The transport's passive side of a service point. */
    interface Listener {
        /** Stops taking requests; the endpoint stays for the request that is still open. */
        void stop();

        /** Closes the endpoint. */
        void close();
    }

    final OfiEvd evd;
    final long connQual;
    final Listener listener;

    OfiServicePoint(OfiIa ia, HandleType type, long connQual, OfiEvd evd) {
        super(ia, type);
        this.evd = evd;
        long[] qual = {connQual};
        this.listener = ia.rdm != null ? new RdmListener(this, qual) : new OfiListener(this, qual);
        this.connQual = qual[0];
        evd.users.incrementAndGet();
        ia.added(this);
    }

    /**
     * A request arrived: its CR ({@code crOf} the EP this service point reserves for it, or null) and
     * the CONNECTION_REQUEST event; false, and no CR, if the service point is freed.
     */
    synchronized boolean request(Function<OfiEp, OfiCr> crOf) {
        if (freed) {
            return false;
        }
        OfiCr cr = crOf.apply(reservedEp());
        consumed();
        evd.enqueue(new DatEvent.ConnectionRequest(evd, this, ia.address, connQual, cr, false));
        return true;
    }

    /** The EP an RSP reserves, or a PSP's provider-created EP, or null. */
    OfiEp reservedEp() {
        return null;
    }

    /** After a request: an RSP is used up. */
    void consumed() {
    }

    /** A request of this service point was accepted, rejected or dropped. */
    void requestDone() {
    }

    @Override
    public void free() {
        live();
        destroy();
        ia.removed(this);
    }

    @Override
    synchronized void destroy() {
        if (freed) {
            return;
        }
        freed = true;
        listener.stop();
        listener.close();
        evd.users.decrementAndGet();
    }
}
