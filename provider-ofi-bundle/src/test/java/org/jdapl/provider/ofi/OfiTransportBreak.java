package org.jdapl.provider.ofi;

import org.jdapl.dat.Endpoint;
import org.jdapl.provider.ofi.fabric.FiCalls;

/**
 * A test hook that breaks the transport connection under an EP behind the DAT layer's back:
 * {@code fi_shutdown} of the EP's libfabric endpoint, without the closing flag a consumer's disconnect
 * writes first ({@link MsgCredits}). On libfabric's verbs provider that is {@code rdma_disconnect}
 * of the endpoint's rdma_cm id (the queue pair goes to the error state, a DREQ goes to the peer), as
 * a failing link or a fatal queue pair error ends the connection: both sides' providers report
 * {@code FI_SHUTDOWN}, and neither consumer asked for it (DISC_17).
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
}
