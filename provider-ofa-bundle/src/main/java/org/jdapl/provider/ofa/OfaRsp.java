package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;

/**
 * An RSP: an rdma_cm ID listening on the qualifier's port for one request, which goes to the
 * reserved EP (RESERVED, then PASSIVE_CONNECTION_PENDING); the arrival destroys the RSP (the
 * listening ID), as DAT has it. Freeing it returns the EP to UNCONNECTED.
 *
 * <p>Behaviours: FREE_07.
 */
final class OfaRsp extends OfaServicePoint implements ReservedServicePoint {
    final long connQual;
    final OfaEp ep;

    private OfaRsp(OfaIa ia, MemorySegment id, long connQual, OfaEvd evd, OfaEp ep) {
        super(HandleType.RSP, ia, id, evd);
        this.connQual = connQual;
        this.ep = ep;
    }

    /** {@code dat_rsp_create}: the EP must be UNCONNECTED; it becomes RESERVED. */
    static OfaRsp create(OfaIa ia, long connQual, Endpoint ep, EventDispatcher crEvd) {
        return ia.locked(() -> {
            OfaEvd evd = ia.crEvd(crEvd, 4);
            OfaEp e = ia.ownEp(ep);
            e.lock.lock();
            try {
                e.reservation().checkReservable();
                MemorySegment id = CmIds.listening(ia.cmChannel(), ia.inetAddress(),
                        PrivateData.port(connQual), connQual, "dat_rsp_create");
                OfaRsp rsp = new OfaRsp(ia, id, connQual, evd, e);
                e.reservation().reserve(rsp);
                rsp.listen();
                return rsp;
            } finally {
                e.lock.unlock();
            }
        });
    }

    /** The request for the reserved EP arrived (event thread): the RSP goes, the EP is PASSIVE_CONNECTION_PENDING. */
    @Override
    public boolean request(RdmaCm.CmEvent e, InetSocketAddress from, int localPort, byte[] data) {
        ia.lock().lock();
        try {
            ep.lock.lock();
            try {
                if (isFreed() || ep.isFreed() || !ep.reservation().isReserved()) {
                    return false;
                }
                OfaCr cr = OfaCr.arrived(ia, e.id(), from, localPort, data, e.responderResources(),
                        e.initiatorDepth(), ep);
                ep.reservation().requestArrived(cr);
                destroy();
                evd.enqueue(new DatEvent.ConnectionRequest(evd, null, ia.address(), connQual, cr, false));
                return true;
            } finally {
                ep.lock.unlock();
            }
        } finally {
            ia.lock().unlock();
        }
    }

    @Override
    public RspParam query() {
        live();
        return new RspParam(ia, connQual, evd, ep);
    }

    /** {@code dat_rsp_free}: the reserved EP returns to UNCONNECTED. */
    @Override
    public void free() {
        ia.lockedFree(() -> {
            if (isFreed()) {
                throw alreadyFreed();
            }
            destroy();
            ep.lock.lock();
            try {
                ep.reservation().unreserve();
            } finally {
                ep.lock.unlock();
            }
        });
    }
}
