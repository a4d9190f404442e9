package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiRdm;

/**
 * The data endpoint of an RDM connection ({@link RdmConnection}): the RDM endpoint bound to the EP's
 * EVDs' CQs, its address vector whose only entry ({@code fi_addr_t} 0) is the peer's data endpoint, and
 * the connection's receive credits ({@link MsgCredits}). Opened at a connect or an accept, closed at
 * the connection's end ({@link RdmDataClose}). Every caller holds the EP's lock.
 */
final class RdmDataEndpoint {
    private final OfiEp ep;
    private final RdmIa rdm;
    /** The endpoint, 0 while none is open. */
    long fid;
    private long av;
    /** The endpoint's name ({@code fi_getname}). */
    byte[] name;
    /** The peer's data endpoint's name, once inserted. */
    byte[] peer;
    /** The receive credits (null while no endpoint is open). */
    MsgCredits credits;

    RdmDataEndpoint(OfiEp ep, RdmIa rdm) {
        this.ep = ep;
        this.rdm = rdm;
    }

    /**
     * Opens the endpoint and its credits and posts the receives that waited. It is bound and enabled
     * under the CQs' locks, while nobody reads them; an EP on an SRQ takes its receives on its own CQ
     * ({@link RdmSrq}).
     */
    void open() {
        long info = rdm.endpointInfo(null);
        long f = 0;
        long a = 0;
        try {
            OfiEvd r = ep.recvEvd();
            OfiEvd q = ep.requestEvd();
            long[] opened = new long[2];
            long rcq = ep.srq != null ? ep.srq.cq : r == null ? 0 : r.cq;
            Runnable enable = () -> System.arraycopy(FiRdm.openEndpoint(ep.ia.domain, info, 1, rcq,
                    q == null ? 0 : q.cq), 0, opened, 0, 2);
            Connection.underCqLocks(r, q, ep.srq == null ? enable : () -> ep.srq.withCqLocked(enable));
            f = opened[0];
            a = opened[1];
            name = FiRdm.name(f);
            if (rdm.named) {
                RdmLocal.opened(name);
            }
            fid = f;
            av = a;
            credits = new MsgCredits(ep.ia, ep.srq == null);
            ep.data.credits = credits;
            ep.data.postDeferred(f, ep.attributes().maxRecvIov());
            if (ep.srq != null) {
                ep.srq.opened(f);
            }
        } catch (FiException | DatException e) {
            fid = 0;
            av = 0;
            OfiIa.closeQuietly(f);
            OfiIa.closeQuietly(a);
            dropCredits();
            throw e instanceof FiException fe ? FiErrors.toDat(fe) : (DatException) e;
        } finally {
            Fi.get().freeinfo(info);
        }
    }

    /** Inserts the peer's data endpoint {@code peerName} into the address vector, as {@code fi_addr_t} 0. */
    void insertPeer(byte[] peerName) {
        long a = FiRdm.avInsert(av, peerName);
        if (a != 0) {
            throw new FiException(-22, "fi_av_insert gave the peer's data endpoint fi_addr " + a + ", not 0");
        }
        peer = peerName;
    }

    /**
     * Closes the endpoint and its address vector, or ({@code now} false, shm) holds the close until
     * the peer's endpoint closes where the peer is an endpoint of this process ({@link RdmDataClose});
     * then the credits.
     */
    void close(boolean now) {
        if (fid != 0) {
            RdmDataClose.close(ep, rdm, fid, av, name, peer, now);
            fid = 0;
            av = 0;
        }
        dropCredits();
    }

    /** Closes the receive credits' registration (after the endpoint). */
    private void dropCredits() {
        if (credits != null) {
            ep.data.credits = null;
            credits.close();
            credits = null;
        }
    }

    /** The private data of a REQ or ACCEPT: the credits' header first while the endpoint is open. */
    byte[] wire(byte[] pd) {
        return credits != null ? credits.wire(pd) : pd;
    }

    /** The connection is established with the peer whose REQ or ACCEPT carried {@code pd}: the count of receives posted goes to it. */
    void established(byte[] pd) {
        if (credits != null && !credits.established(fid, MsgCredits.peerOf(pd))) {
            ep.ia.held.holding(ep, true); // the count's write is tried again by the pump
        }
    }

    /** shm: the peer's data endpoint was one of this process's and is closed now ({@link RdmLocal#gone}). */
    boolean peerGone() {
        return RdmLocal.gone(peer);
    }
}
