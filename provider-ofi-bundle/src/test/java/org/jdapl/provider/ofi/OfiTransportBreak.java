package org.jdapl.provider.ofi;

import java.lang.reflect.Field;
import org.jdapl.dat.Endpoint;
import org.jdapl.provider.ofi.fabric.FiCalls;

/**
 * Test hooks that break the connection under an EP behind the DAT layer's back (DISC_17).
 *
 * <p>{@link #shutdown}: {@code fi_shutdown} of the EP's libfabric MSG endpoint, without the closing
 * flag a consumer's disconnect writes first ({@link MsgCredits}). On libfabric's verbs provider that is
 * {@code rdma_disconnect} of the endpoint's rdma_cm id (the queue pair goes to the error state, a DREQ
 * goes to the peer), as a failing link or a fatal queue pair error ends the connection: both sides'
 * providers report {@code FI_SHUTDOWN}, and neither consumer asked for it.
 *
 * <p>{@link #silence}: an RDM connection has no transport connection of its own; what ends it below
 * the DAT layer is a peer that dies or a path that is cut, which both sides see as silence
 * (RDM_PROTOCOL.md, Keepalive). The EP's connection stops hearing its peer and stops speaking to it,
 * as if the path between them were cut both ways: each side's keepalive reports {@code BROKEN}
 * within the bound, and no DISC goes to the peer.
 */
public final class OfiTransportBreak {
    private OfiTransportBreak() {
    }

    /** Shuts the libfabric endpoint of {@code ep} down; false if it has none. */
    public static boolean shutdown(Endpoint ep) {
        OfiEp e = (OfiEp) ep;
        synchronized (e) {
            long fid = e.conn.fid();
            if (fid == 0) {
                return false;
            }
            return FiCalls.shutdown(fid, 0) == 0;
        }
    }

    /**
     * Cuts the control path of the RDM connection of {@code ep} both ways: its messages to the peer
     * are not sent (no peer control address), the peer's are dropped as a stranger's (the peer's
     * connection id is not the one it knows); false if the EP is not connected over RDM.
     */
    public static boolean silence(Endpoint ep) {
        OfiEp e = (OfiEp) ep;
        synchronized (e) {
            if (!(e.conn instanceof RdmConnection c) || c.state != org.jdapl.dat.EpState.CONNECTED) {
                return false;
            }
            try {
                Field peerCtl = RdmConnection.class.getDeclaredField("peerCtl");
                Field peerConn = RdmConnection.class.getDeclaredField("peerConn");
                peerCtl.setAccessible(true);
                peerConn.setAccessible(true);
                peerCtl.setLong(c, -1);
                peerConn.setLong(c, peerConn.getLong(c) ^ Long.MIN_VALUE);
            } catch (ReflectiveOperationException x) {
                throw new IllegalStateException("RdmConnection has no peerCtl or peerConn to cut: " + x, x);
            }
            return true;
        }
    }
}
