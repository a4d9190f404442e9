package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import org.jdapl.dat.HandleType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;

/**
 * What the three service points (PSP, RSP, CSP) share: a listening rdma_cm ID whose requests go to a
 * CR EVD, registered with the router and the IA when created, destroyed with the ID.
 */
abstract class OfaServicePoint extends OfaHandle implements IaObjects.Owned, OfaRouter.ServicePoint {
    final OfaIa ia;
    final MemorySegment id;
    final OfaEvd evd;
    /** A PSP's RDMA_PS_UDP listening ID on the same port, for UD exchanges ({@link UdExchange}), or null. */
    MemorySegment udId;

    OfaServicePoint(HandleType type, OfaIa ia, MemorySegment id, OfaEvd evd) {
        super(type);
        this.ia = ia;
        this.id = id;
        this.evd = evd;
    }

    /** Makes the new service point live: the router hands it its ID's requests, the EVD counts it (IA lock held). */
    final void listen() {
        ia.router().addListener(id, this);
        if (udId != null) {
            ia.router().addListener(udId, this);
        }
        evd.users++;
        ia.objects().add(type(), this);
    }

    public void free() {
        ia.free(this);
    }

    /** Destroys the listening ID once (IA lock held). */
    @Override
    public final void destroy() {
        if (!markFreed()) {
            return;
        }
        if (ia.objects().remove(type(), this)) {
            evd.users--;
        }
        ia.router().removeListener(id);
        if (udId != null) {
            ia.router().removeListener(udId);
            NativeErrors.quietly("rdma_destroy_id", () -> RdmaCm.get().destroyId(udId));
        }
        // Waits for the ID's events to be acknowledged; the event thread acks before dispatching.
        NativeErrors.quietly("rdma_destroy_id", () -> RdmaCm.get().destroyId(id));
    }
}
