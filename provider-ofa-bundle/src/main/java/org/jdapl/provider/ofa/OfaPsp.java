package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;

/**
 * A PSP: an rdma_cm ID on the IA's event channel, bound to the IA address with the connection
 * qualifier as port ({@code rdma_bind_addr}, {@link PrivateData#port}) and listening
 * ({@code rdma_listen}); a qualifier in use fails CONN_QUAL_IN_USE. Freeing it destroys
 * the ID. A PSP with {@link PspFlag#PROVIDER} creates an EP for each request, as OFED's cma provider
 * does: without a queue pair, in TENTATIVE_CONNECTION_PENDING, with the PSP's EVD as connect EVD if
 * it has the CONNECTION stream ({@link ProviderEps}); the consumer gives it a PZ and EVDs with
 * {@code dat_ep_modify}, and the queue pair is made when the request is accepted (DISC_11, FREE_02,
 * FREE_07).
 *
 * <p>Behaviours: OBJ_06, DISC_11, FREE_02, FREE_07.
 */
final class OfaPsp extends OfaServicePoint implements PublicServicePoint {
    final long connQual;
    final PspFlag flag;

    private OfaPsp(OfaIa ia, MemorySegment id, long connQual, OfaEvd evd, PspFlag flag) {
        super(HandleType.PSP, ia, id, evd);
        this.connQual = connQual;
        this.flag = flag;
    }

    /** {@code dat_psp_create} ({@code connQual} -1: {@code dat_psp_create_any}). */
    static OfaPsp create(OfaIa ia, long connQual, EventDispatcher crEvd, PspFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(4, "null PSP flag");
        }
        return ia.locked(() -> {
            OfaEvd evd = ia.crEvd(crEvd, 3);
            int port = connQual < 0 ? 0 : PrivateData.port(connQual);
            MemorySegment id = CmIds.listening(ia.cmChannel(), ia.inetAddress(), port, connQual, "dat_psp_create");
            long qual = connQual < 0 ? RdmaCm.sourceAddress(id).getPort() : connQual;
            OfaPsp psp = new OfaPsp(ia, id, qual, evd, flag);
            psp.udId = UdExchange.listening(ia, RdmaCm.sourceAddress(id).getPort());
            psp.listen();
            return psp;
        });
    }

    /**
     * A connect request at the PSP (event thread, or a consumer polling for rdma_cm events): a CR
     * event, with a provider-created EP for a PROVIDER PSP. Under the IA's lock, as the IA's close
     * destroys its objects under it: a request either becomes a CR before the close starts (and the
     * close frees it) or finds the PSP freed and is refused, never a CR the close has gone past
     * (OBJ_01, OBJ_06).
     *
     * <p>Behaviours: OBJ_01, OBJ_06.
     */
    @Override
    public boolean request(RdmaCm.CmEvent e, InetSocketAddress from, int localPort, byte[] data) {
        ia.lock().lock();
        try {
            if (isFreed() || ia.isFreed()) {
                return false;
            }
            if (RdmaCm.isUdp(e.id())) {
                return UdExchange.requested(this, e, from);
            }
            OfaEp ep = null;
            if (flag == PspFlag.PROVIDER) {
                ep = ProviderEps.create(ia, evd.flags().contains(EvdFlag.CONNECTION) ? evd : null);
                if (ep == null) {
                    return false;
                }
            }
            OfaCr cr = OfaCr.arrived(ia, e.id(), from, localPort, data, e.responderResources(), e.initiatorDepth(),
                    ep);
            if (ep != null) {
                ep.reservation().requestArrived(cr);
            }
            evd.enqueue(new DatEvent.ConnectionRequest(evd, this, ia.address(), connQual, cr, false));
            return true;
        } finally {
            ia.lock().unlock();
        }
    }

    /** A request handed off to this PSP ({@code dat_cr_handoff}); IA lock held. */
    void requestAgain(OfaCr cr) {
        evd.enqueue(new DatEvent.ConnectionRequest(evd, this, ia.address(), connQual, cr, false));
    }

    @Override
    public PspParam query() {
        live();
        return new PspParam(ia, connQual, evd, flag);
    }
}
