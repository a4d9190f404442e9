package org.jdapl.provider.ofi;

import java.net.InetSocketAddress;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;

/**
 * A CR on either kind of endpoint: the request's private data and peer, the EP its service point
 * reserved for it (an RSP's, or a PSP's provider-created one), and the DAT rules of accept and reject:
 * the private data's bound, the reserved EP, a provider-created EP freed by the reject, the CR
 * consumed by either. The transport answers: {@link MsgCr} ({@code fi_accept}/{@code fi_reject}),
 * {@link RdmCr} (ACCEPT/REJECT of the RDM protocol).
 *
 * <p>The IA counts the accepts and rejects (DAT_COUNTERS) here, for both transports.
 *
 * <p>Behaviours: CONN_03, CONN_04, CONN_10, CONN_11, CONN_13, FREE_07, EXT_09.
 */
abstract class OfiCr extends OfiObject implements ConnectionRequest {
    final OfiServicePoint sp;
    private final byte[] privateData;
    private final InetSocketAddress peer;
    final OfiEp reserved;

    OfiCr(OfiServicePoint sp, byte[] privateData, InetSocketAddress peer, OfiEp reserved) {
        super(sp.ia, HandleType.CR);
        this.sp = sp;
        this.privateData = privateData;
        this.peer = peer;
        this.reserved = reserved;
        ia.added(this);
    }

    /** Accepts on {@code e} (checked) with the consumer's private data. */
    abstract void acceptOn(OfiEp e, byte[] pd);

    /** Answers the request with the consumer's reject and its private data {@code pd}. */
    abstract void sendReject(byte[] pd);

    /** Answers a request nobody took (the CR is freed unanswered). */
    abstract void refuse();

    /** The CR is consumed: what it holds of the transport's goes. */
    void released() {
    }

    @Override
    public CrParam query() {
        live();
        return new CrParam(peer == null ? null : new InetSocketAddress(peer.getAddress(), 0),
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
        acceptOn(e, pd);
        ia.counters.inc(IaCounter.SP_CR_ACCEPTED);
        consume();
    }

    @Override
    public synchronized void reject(byte[] pd) {
        live();
        byte[] b = pd == null ? new byte[0] : pd;
        if (b.length > ia.maxPrivateData) {
            throw DatException.invalidParameter(2, b.length + " bytes of private data, at most " + ia.maxPrivateData);
        }
        sendReject(b);
        ia.counters.inc(IaCounter.SP_CR_REJECTED);
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
        released();
        ia.removed(this);
        sp.requestDone();
    }

    @Override
    synchronized void destroy() {
        if (!freed) {
            refuse();
            consume();
        }
    }
}
