package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;

/**
 * A PSP: an rdma_cm ID on the IA's event channel, bound to the IA address with the connection
 * qualifier as port ({@code rdma_bind_addr}) and listening ({@code rdma_listen}). Freeing it
 * destroys the ID.
 */
final class OfaPsp extends OfaHandle implements PublicServicePoint {
    final OfaIa ia;
    final MemorySegment id;
    final long connQual;
    final OfaEvd evd;
    final PspFlag flag;

    OfaPsp(OfaIa ia, MemorySegment id, long connQual, OfaEvd evd, PspFlag flag) {
        super(HandleType.PSP);
        this.ia = ia;
        this.id = id;
        this.connQual = connQual;
        this.evd = evd;
        this.flag = flag;
    }

    @Override
    public PspParam query() {
        live();
        return new PspParam(ia, connQual, evd, flag);
    }

    @Override
    public void free() {
        ia.freePsp(this);
    }
}
