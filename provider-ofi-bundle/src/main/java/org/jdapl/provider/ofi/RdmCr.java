package org.jdapl.provider.ofi;

import java.net.InetSocketAddress;

/**
 * A CR over RDM: the REQ message (the requester's connection id, control and data addresses, private
 * data). Accept opens the EP's endpoints and answers ACCEPT from the EP's own control endpoint;
 * reject answers REJECT with the consumer's flag from the listener's endpoint, so that the active
 * side tells PEER_REJECTED from NON_PEER_REJECTED; a CR freed unanswered is refused
 * (NON_PEER_REJECTED).
 *
 * <p>Behaviours: CONN_03, CONN_04, CONN_13.
 */
final class RdmCr extends OfiCr {
    private final RdmListener listener;
    private final RdmMessage req;

    RdmCr(OfiServicePoint sp, RdmListener listener, RdmMessage req, OfiEp reserved) {
        super(sp, MsgCredits.consumerData(req.pd()), new InetSocketAddress(RdmMessage.ip(req.ip()), req.port()), reserved);
        this.listener = listener;
        this.req = req;
    }

    @Override
    void acceptOn(OfiEp e, byte[] pd) {
        ((RdmConnection) e.conn).accept(req, pd);
    }

    @Override
    void sendReject(byte[] pd) {
        listener.reply(req, RdmMessage.PEER, pd);
    }

    @Override
    void refuse() {
        listener.refuse(req);
    }
}
