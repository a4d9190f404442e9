package org.jdapl.provider.ofi;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpState;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiLayouts;

/**
 * A CR: the {@code fi_info} of an {@code FI_CONNREQ} entry (with the request's handle and the peer's
 * address) and its private data. Accept creates the EP's endpoint from that info and calls
 * {@code fi_accept}; reject calls {@code fi_reject} with jdapl's header byte before the consumer's
 * private data, so that the active side tells a consumer's reject from a provider's. Either
 * consumes the CR and frees the info.
 *
 * <p>Behaviours: CONN_03, CONN_04, CONN_10, CONN_11, CONN_13, FREE_07.
 */
final class OfiCr extends OfiObject implements ConnectionRequest {
    private final OfiListener listener;
    private final long info;
    private final byte[] privateData;
    private final InetSocketAddress peer;
    private final OfiEp reserved;

    OfiCr(OfiListener listener, long info, byte[] privateData, InetSocketAddress peer, OfiEp reserved) {
        super(listener.ia, HandleType.CR);
        this.listener = listener;
        this.info = info;
        this.privateData = privateData;
        this.peer = peer;
        this.reserved = reserved;
        ia.added(this);
    }

    @Override
    public CrParam query() {
        live();
        return new CrParam(peer == null ? null : new java.net.InetSocketAddress(peer.getAddress(), 0),
                peer == null ? 0 : peer.getPort(), privateData.clone(), reserved);
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
        e.conn.accept(info, pd, peer);
        ia.counters.inc(org.jdapl.dat.IaCounter.SP_CR_ACCEPTED);
        consume();
    }

    @Override
    public synchronized void reject(byte[] pd) {
        live();
        byte[] b = pd == null ? new byte[0] : pd;
        if (b.length > ia.maxPrivateData) {
            throw DatException.invalidParameter(2, b.length + " bytes of private data, at most " + ia.maxPrivateData);
        }
        byte[] wire = new byte[b.length + 1];
        wire[0] = EpConnection.REJECT_HEADER;
        System.arraycopy(b, 0, wire, 1, b.length);
        try (Arena a = Arena.ofConfined()) {
            int rc = FiCalls.reject(listener.pep, FiCalls.word(info + FiLayouts.INFO_HANDLE),
                    OfiEp.nativeBytes(a, wire).address(), wire.length);
            if (rc < 0 && rc != -Fi.FI_EAGAIN) {
                throw FiErrors.toDat(rc, "fi_reject");
            }
        }
        ia.counters.inc(org.jdapl.dat.IaCounter.SP_CR_REJECTED);
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
        Fi.get().freeinfo(info);
        ia.removed(this);
        listener.requestDone();
    }

    @Override
    synchronized void destroy() {
        if (!freed) {
            if (!listener.freed || reserved != null) {
                FiCalls.reject(listener.pep, FiCalls.word(info + FiLayouts.INFO_HANDLE), 0, 0);
            }
            consume();
        }
    }
}
