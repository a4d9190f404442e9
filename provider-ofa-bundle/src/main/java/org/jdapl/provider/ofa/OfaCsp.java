package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.HandleType;

/** A CSP: an rdma_cm ID listening on a full IPv4 address and port. */
final class OfaCsp extends OfaHandle implements CommonServicePoint {
    final OfaIa ia;
    final MemorySegment id;
    final InetSocketAddress address;
    final OfaEvd evd;

    OfaCsp(OfaIa ia, MemorySegment id, InetSocketAddress address, OfaEvd evd) {
        super(HandleType.CSP);
        this.ia = ia;
        this.id = id;
        this.address = address;
        this.evd = evd;
    }

    @Override
    public CspParam query() {
        live();
        return new CspParam(ia, address, evd);
    }

    @Override
    public void free() {
        ia.freeCsp(this);
    }
}
