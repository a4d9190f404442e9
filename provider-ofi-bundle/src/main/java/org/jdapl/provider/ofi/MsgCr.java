package org.jdapl.provider.ofi;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiLayouts;

/**
 * A CR on MSG endpoints: the {@code fi_info} of an {@code FI_CONNREQ} entry (with the request's
 * handle and the peer's address). Accept creates the EP's endpoint from that info and calls
 * {@code fi_accept}; reject calls {@code fi_reject} with jdapl's header byte before the consumer's
 * private data, so that the active side tells a consumer's reject from a provider's. The info is
 * freed when the CR is consumed.
 *
 * <p>Behaviours: CONN_03, CONN_04, CONN_13.
 */
final class MsgCr extends OfiCr {
    private final OfiListener listener;
    private final long info;
    private final InetSocketAddress peer;
    private final MsgCredits.Peer credits;

    /** {@code data} is the request's private data: the credit header ({@link MsgCredits}), then the consumer's. */
    MsgCr(OfiServicePoint sp, OfiListener listener, long info, byte[] data, InetSocketAddress peer, OfiEp reserved) {
        super(sp, MsgCredits.consumerData(data), peer, reserved);
        this.listener = listener;
        this.info = info;
        this.peer = peer;
        this.credits = MsgCredits.peerOf(data);
        listener.requestOpened();
    }

    @Override
    void acceptOn(OfiEp e, byte[] pd) {
        ((EpConnection) e.conn).accept(info, pd, peer, credits);
    }

    @Override
    void sendReject(byte[] pd) {
        byte[] wire = new byte[pd.length + 1];
        wire[0] = EpConnection.REJECT_HEADER;
        System.arraycopy(pd, 0, wire, 1, pd.length);
        try (Arena a = Arena.ofConfined()) {
            int rc = listener.reject(FiCalls.word(info + FiLayouts.INFO_HANDLE),
                    OfiEp.nativeBytes(a, wire).address(), wire.length);
            if (rc < 0 && rc != -Fi.FI_EAGAIN) {
                throw FiErrors.toDat(rc, "fi_reject");
            }
        }
    }

    @Override
    void refuse() {
        // The passive endpoint lives until this request is done (OfiListener), a freed PSP's too.
        listener.reject(FiCalls.word(info + FiLayouts.INFO_HANDLE), 0, 0);
    }

    @Override
    void released() {
        Fi.get().freeinfo(info);
        listener.requestClosed();
    }
}
