package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ReservedServicePoint;

/**
 * An RSP: an rdma_cm ID listening on the qualifier's port for one request, which goes to the
 * reserved EP; the arrival destroys the RSP (the listening ID), as DAT has it.
 */
final class OfaRsp extends OfaHandle implements ReservedServicePoint {
    final OfaIa ia;
    final MemorySegment id;
    final long connQual;
    final OfaEvd evd;
    final OfaEp ep;

    OfaRsp(OfaIa ia, MemorySegment id, long connQual, OfaEvd evd, OfaEp ep) {
        super(HandleType.RSP);
        this.ia = ia;
        this.id = id;
        this.connQual = connQual;
        this.evd = evd;
        this.ep = ep;
    }

    @Override
    public RspParam query() {
        live();
        return new RspParam(ia, connQual, evd, ep);
    }

    /** {@code dat_rsp_free}: the reserved EP returns to UNCONNECTED. */
    @Override
    public void free() {
        ia.freeRsp(this);
    }
}
