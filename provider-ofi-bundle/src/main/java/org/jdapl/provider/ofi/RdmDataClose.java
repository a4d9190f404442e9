package org.jdapl.provider.ofi;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jdapl.provider.ofi.fabric.FiCalls;

/**
 * The close of an RDM connection's data endpoint and its address vector ({@link RdmConnection}): at
 * once; through the EP's SRQ, whose receives lent to the endpoint go back to it; or, on shm whose
 * peer is an open endpoint of this process, held until that peer closes ({@link #closeAfterPeer}).
 * The EP's lock is held by the caller.
 */
final class RdmDataClose {
    private RdmDataClose() {
    }

    /**
     * Closes the data endpoint {@code fid} and its address vector {@code av} of {@code ep}'s connection,
     * or ({@code now} false, shm) holds the close until the peer's endpoint closes where the peer is an
     * endpoint of this process ({@link #closeAfterPeer}).
     */
    static void close(OfiEp ep, RdmIa rdm, long fid, long av, byte[] dataName, byte[] peerData, boolean now) {
        if (rdm.named) {
            RdmLocal.closing(dataName);
        }
        Runnable close = () -> {
            if (!rdm.named) {
                progress(ep);
            }
            OfiIa.closeQuietly(fid);
            OfiIa.closeQuietly(av);
        };
        if (ep.srq != null) {
            ep.srq.closing(close); // the SRQ's receives lent to the endpoint go back to the SRQ
            if (rdm.named) {
                RdmLocal.closed(dataName);
            }
        } else if (!rdm.named) {
            close.run();
        } else if (now || !closeAfterPeer(ep, rdm, fid, dataName, peerData, close)) {
            close.run();
            RdmLocal.closed(dataName);
        }
    }

    /**
     * rxm: drives the progress of the endpoints bound to the EP's CQs without taking a completion
     * ({@code fi_cq_read} of no entries: libfabric's CQ progresses its endpoints first). rxm 1.17's
     * close of an endpoint closes each connection's core endpoint and then reads the core CQ, and a
     * message received before the close is handled there and its buffer posted again to the closed
     * core endpoint: the JVM died of a SIGSEGV in libfabric.so.1 ({@code rxm_post_recv}) at an IA's
     * close in the rxm kit on verbs. What has arrived is handled first; the CQs' locks are held.
     */
    private static void progress(OfiEp ep) {
        for (OfiEvd e : new OfiEvd[] {ep.recvEvd(), ep.requestEvd()}) {
            if (e != null && e.cq != 0 && !e.freed) {
                for (int i = 0; i < 4; i++) {
                    FiCalls.cqRead(e.cq, 0L, 0);
                }
            }
        }
        if (ep.srq != null) {
            for (int i = 0; i < 4; i++) {
                FiCalls.cqRead(ep.srq.cq, 0L, 0);
            }
        }
    }

    /**
     * shm: holds the data endpoint's close until its peer endpoint closes, if that is an open endpoint
     * of this process ({@link RdmLocal#closeAfter}: the peer's progress may still touch this endpoint's
     * region); the receives posted to it are cancelled first, so that nothing lands in them after the
     * DTOs are flushed, and its DTO completions read later name retired slots. The IA's close closes
     * it at the latest ({@link RdmIa#heldCloses}). False if the peer is not such an endpoint.
     */
    private static boolean closeAfterPeer(OfiEp ep, RdmIa rdm, long f, byte[] dataName, byte[] peerData,
                                          Runnable close) {
        if (peerData == null || !RdmLocal.open(peerData)) {
            return false;
        }
        DtoQueue recv = ep.data.recv;
        for (int s : recv.liveSlots()) {
            if (recv.deferred[s] == null) {
                FiCalls.cancel(f, recv.context(recv.seqOf(s)));
            }
        }
        OfiEvd r = ep.recvEvd();
        OfiEvd q = ep.requestEvd();
        AtomicBoolean done = new AtomicBoolean();
        Runnable[] self = new Runnable[1];
        Runnable later = () -> {
            if (done.compareAndSet(false, true)) {
                Connection.underCqLocks(r, q, close);
                RdmLocal.closed(dataName);
                rdm.heldCloses.remove(self[0]);
            }
        };
        self[0] = later;
        if (!RdmLocal.closeAfter(peerData, later)) {
            return false;
        }
        rdm.heldCloses.add(later);
        return true;
    }
}
