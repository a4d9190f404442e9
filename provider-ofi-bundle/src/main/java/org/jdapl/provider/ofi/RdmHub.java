package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IA's hub: one control endpoint ({@link RdmChannel}) per RDM IA through which a connection
 * request goes to a PSP and the PSP's reject or the passive side's accept comes back
 * (RDM_PROTOCOL.md). A message it receives goes to the connection its {@code dst} names; an ACCEPT
 * for a connection that no longer waits (timed out, disconnected, freed) is answered ABORT to the
 * accepting IA's hub, whose connection then ends ACCEPT_COMPLETION_ERROR.
 *
 * <p>Why a hub: libfabric's shm serves at most 256 peers per endpoint (SMR_MAX_PEERS) and a slot
 * taken by a peer stays taken while the endpoint lives; a PSP that heard from each connecting EP's
 * own endpoint overflows after 256 requests (the slots are reused while still named, and a reply goes
 * to the wrong region or to none). Through the hubs a PSP hears from one endpoint per remote IA, and
 * a hub from one per remote IA and PSP. On rxm the hub also carries the control messages of every
 * connection of the IA (RTU, DISC, ABORT, KEEPALIVE): rxm connects each pair of its endpoints anew,
 * and over verbs that is an RDMA CM connection.
 *
 * <p>Behaviours: CONN_05, CONN_07, FREE_03.
 */
final class RdmHub implements RdmChannel.Owner {
    private static final Logger LOG = LoggerFactory.getLogger(RdmHub.class);

    private final RdmIa rdm;
    final RdmChannel channel;

    RdmHub(RdmIa rdm) {
        this.rdm = rdm;
        this.channel = new RdmChannel(rdm.ia, null, this);
    }

    /** Sends {@code m} to the endpoint named {@code to}; fails as {@link RdmChannel#send} does. */
    void send(byte[] to, RdmMessage m) {
        channel.send(channel.insert(to), m);
    }

    @Override
    public void received(RdmChannel ch, RdmMessage m) {
        RdmConnection c = m.dst() == 0 ? null : rdm.connections.get(m.dst());
        if (c != null) {
            c.received(ch, m);
        } else if (m.type() == RdmMessage.ACCEPT) {
            abort(m);
        }
    }

    /** Answers the ACCEPT {@code m} with ABORT: the active side no longer waits for it. */
    void abort(RdmMessage m) {
        try {
            send(m.from(), new RdmMessage(RdmMessage.ABORT, 0, m.dst(), m.src(), 0, 0, channel.name, new byte[0],
                    new byte[0], channel.name));
        } catch (DatException e) {
            LOG.debug("ABORT of a late accept: {}", e.getMessage());
        }
    }

    @Override
    public void sendFailed(RdmChannel ch, int err, long src) {
        RdmConnection c = rdm.connections.get(src);
        if (c != null) {
            c.sendFailed(ch, err, src);
        }
    }

    void close() {
        channel.close();
    }
}
