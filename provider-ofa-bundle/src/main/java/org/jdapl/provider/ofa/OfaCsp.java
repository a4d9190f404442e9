package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;

/** A CSP: an rdma_cm ID listening on a full IPv4 address and port (the IA's address). */
final class OfaCsp extends OfaServicePoint implements CommonServicePoint {
    final InetSocketAddress address;

    private OfaCsp(OfaIa ia, MemorySegment id, InetSocketAddress address, OfaEvd evd) {
        super(HandleType.CSP, ia, id, evd);
        this.address = address;
    }

    /** {@code dat_csp_create}: a port in use fails PORT_IN_USE. */
    static OfaCsp create(OfaIa ia, SocketAddress cspAddress, EventDispatcher crEvd) {
        InetSocketAddress own = ia.inetAddress();
        if (!(cspAddress instanceof InetSocketAddress isa) || isa.isUnresolved()
                || !isa.getAddress().equals(own.getAddress()) || isa.getPort() < 1) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE, cspAddress
                    + " is not this IA's address " + own.getAddress().getHostAddress() + " with a port");
        }
        return ia.locked(() -> {
            OfaEvd evd = ia.crEvd(crEvd, 3);
            MemorySegment id;
            try {
                id = CmIds.listening(ia.cmChannel(), ia.inetAddress(), isa.getPort(), isa.getPort(),
                        "dat_csp_create");
            } catch (DatException e) {
                if (e.type() == DatReturnType.CONN_QUAL_IN_USE) {
                    throw new DatException(DatReturnType.PORT_IN_USE, e.getMessage());
                }
                throw e;
            }
            OfaCsp csp = new OfaCsp(ia, id, isa, evd);
            csp.listen();
            return csp;
        });
    }

    @Override
    public boolean request(RdmaCm.CmEvent e, InetSocketAddress from, int localPort, byte[] data) {
        // Under the IA's lock, as OfaPsp#request: never a CR that the IA's close has gone past.
        ia.lock().lock();
        try {
            if (isFreed() || ia.isFreed()) {
                return false;
            }
            OfaCr cr = OfaCr.arrived(ia, e.id(), from, localPort, data, e.responderResources(), e.initiatorDepth(),
                    null);
            evd.enqueue(new DatEvent.ConnectionRequest(evd, this, ia.address(), address.getPort(), cr, false));
            return true;
        } finally {
            ia.lock().unlock();
        }
    }

    @Override
    public CspParam query() {
        live();
        return new CspParam(ia, address, evd);
    }
}
