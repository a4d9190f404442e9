package org.jdapl.provider.ofi;

import java.net.InetSocketAddress;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.HandleType;

/**
 * A CR over RDM: the REQ message (the requester's connection id, control and data addresses, private
 * data). Accept opens the EP's endpoints and answers ACCEPT from the EP's own control endpoint;
 * reject answers REJECT with the consumer's flag from the listener's endpoint, so that the active
 * side tells PEER_REJECTED from NON_PEER_REJECTED. Either consumes the CR.
 *
 * <p>Behaviours: CONN_03, CONN_04, CONN_10, CONN_11, CONN_13, FREE_07.
 */
final class RdmCr extends OfiObject implements ConnectionRequest {
    private final RdmListener listener;
    private final RdmMessage req;
    private final OfiEp reserved;
    volatile InetSocketAddress peer;

    RdmCr(RdmListener listener, RdmMessage req, OfiEp reserved) {
        super(listener.ia, HandleType.CR);
        this.listener = listener;
        this.req = req;
        this.reserved = reserved;
        ia.added(this);
    }

    @Override
    public CrParam query() {
        live();
        InetSocketAddress p = peer;
        return new CrParam(p == null ? null : new InetSocketAddress(p.getAddress(), 0), p == null ? 0 : p.getPort(),
                req.pd().clone(), reserved);
    }

    @Override
    public synchronized void accept(Endpoint ep, byte[] pd) {
        live();
        OfiEp e = reserved != null && ep == null ? reserved : OfiEp.of(ia, ep);
        if (pd != null && pd.length > ia.maxPrivateData) {
            throw DatException.invalidParameter(3, pd.length + " bytes of private data, at most " + ia.maxPrivateData);
        }
        if (reserved != null && e != reserved) {
            throw DatException.invalidParameter(2, "the request is for the EP the RSP or PSP names");
        }
        if (e.pz() == null) {
            throw DatException.invalidParameter(2, "the provider-created EP has no PZ yet (dat_ep_modify gives it one)");
        }
        ((RdmConnection) e.conn).accept(req, pd);
        consume();
    }

    @Override
    public synchronized void reject(byte[] pd) {
        live();
        byte[] b = pd == null ? new byte[0] : pd;
        if (b.length > ia.maxPrivateData) {
            throw DatException.invalidParameter(2, b.length + " bytes of private data, at most " + ia.maxPrivateData);
        }
        listener.reply(req, RdmMessage.PEER, b);
        if (reserved != null) {
            boolean providers;
            synchronized (reserved) {
                providers = reserved.conn.state() == EpState.TENTATIVE_CONNECTION_PENDING;
                if (reserved.conn.state() == EpState.PASSIVE_CONNECTION_PENDING) {
                    reserved.conn.setState(EpState.UNCONNECTED);
                }
            }
            if (providers && !reserved.freed) {
                reserved.destroy();
                ia.removed(reserved);
            }
        }
        consume();
    }

    @Override
    public void handoff(long connQual) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the ofi provider does not hand requests off");
    }

    private void consume() {
        freed = true;
        ia.removed(this);
        listener.requestDone();
    }

    @Override
    synchronized void destroy() {
        if (!freed) {
            listener.refuse(req);
            consume();
        }
    }
}
