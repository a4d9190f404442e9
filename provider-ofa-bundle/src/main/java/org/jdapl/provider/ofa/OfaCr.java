package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A CR: the rdma_cm ID of a connect request (RDMA_CM_EVENT_CONNECT_REQUEST) with what the active
 * side sent. Accepting hands the ID to the EP; rejecting sends the REJ with the
 * consumer's private data and destroys the ID. If the active side withdraws first (its REJ,
 * a time-out), the request is dead and a later accept fails. A request at an RSP or a PROVIDER PSP
 * names its EP ({@link #localEp}); a reject or handoff returns a reserved EP to UNCONNECTED and frees
 * a provider-created one.
 *
 * <p>Behaviours: CONN_04, CONN_10, CONN_11, FREE_07.
 */
final class OfaCr extends OfaHandle implements ConnectionRequest, IaObjects.Owned {
    private static final Logger LOG = LoggerFactory.getLogger(OfaCr.class);

    private final OfaIa ia;
    private MemorySegment id;
    private final InetSocketAddress remoteAddress;
    private final int remotePort;
    private final int localPort;
    private final byte[] privateData;
    private final int responderResources;
    private final int initiatorDepth;
    /** The reserved or provider-created EP of the request, or null. */
    private final OfaEp reservedEp;
    private volatile boolean alive = true;

    /** A request that arrived (event thread): registered with the IA and its router. */
    static OfaCr arrived(OfaIa ia, MemorySegment id, InetSocketAddress remote, int localPort, byte[] privateData,
                         int responderResources, int initiatorDepth, OfaEp localEp) {
        OfaCr cr = new OfaCr(ia, id, remote, localPort, privateData, responderResources, initiatorDepth, localEp);
        ia.objects().add(HandleType.CR, cr);
        ia.router().addCr(id, cr::withdrawn);
        return cr;
    }

    private OfaCr(OfaIa ia, MemorySegment id, InetSocketAddress remote, int localPort, byte[] privateData,
                  int responderResources, int initiatorDepth, OfaEp reservedEp) {
        super(HandleType.CR);
        this.ia = ia;
        this.id = id;
        this.remoteAddress = new InetSocketAddress(remote.getAddress(), 0);
        this.remotePort = remote.getPort();
        this.localPort = localPort;
        this.privateData = privateData;
        this.responderResources = responderResources;
        this.initiatorDepth = initiatorDepth;
        this.reservedEp = reservedEp;
    }

    /** The same request handed to another service point ({@code dat_cr_handoff}). */
    OfaCr handedOff() {
        return arrived(ia, id, new InetSocketAddress(remoteAddress.getAddress(), remotePort), localPort,
                privateData, responderResources, initiatorDepth, null);
    }

    MemorySegment id() {
        return id;
    }

    OfaEp reservedEp() {
        return reservedEp;
    }

    InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    long remotePort() {
        return remotePort;
    }

    long localPort() {
        return localPort;
    }

    int responderResources() {
        return responderResources;
    }

    int initiatorDepth() {
        return initiatorDepth;
    }

    boolean alive() {
        return alive;
    }

    /** The active side withdrew the request (REJ, time-out, device removal). Event thread. */
    void withdrawn() {
        alive = false;
    }

    /** Hands the ID to the accepting EP. */
    synchronized MemorySegment takeId() {
        MemorySegment i = id;
        id = MemorySegment.NULL;
        ia.router().removeCr(i);
        return i;
    }

    @Override
    public CrParam query() {
        live();
        return new CrParam(remoteAddress, remotePort, privateData.clone(), reservedEp);
    }

    /** {@code dat_cr_accept}; see {@link ConnectionRequest#accept}. */
    @Override
    public void accept(Endpoint ep, byte[] data) {
        live();
        byte[] pd = ia.wire.check(data, 3);
        OfaEp target;
        if (ep == null) {
            if (reservedEp == null) {
                throw DatException.invalidParameter(2, "no EP given and the request has no reserved EP");
            }
            target = reservedEp;
        } else if (!(ep instanceof OfaEp e) || e.ia != ia || e.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "dat_cr_accept: not a live EP of IA "
                    + ia.name());
        } else {
            target = e;
        }
        if (reservedEp != null && target != reservedEp) {
            throw DatException.invalidParameter(2, "the request is reserved for another EP");
        }
        if (target == reservedEp) {
            ProviderEps.attachForAccept(target);
        }
        synchronized (this) {
            live();
            try {
                target.accept(this, pd);
            } catch (DatException e) {
                if (e.subtype() == DatReturnSubtype.NO_SUBTYPE && !alive) {
                    consume();
                }
                throw e;
            }
            markFreed();
            ia.objects().remove(HandleType.CR, this);
            ia.objects().count(IaCounter.SP_CR_ACCEPTED);
        }
    }

    /** {@code dat_cr_reject}: the active side gets PEER_REJECTED with the private data. */
    @Override
    public void reject(byte[] data) {
        live();
        byte[] pd = ia.wire.check(data, 2);
        synchronized (this) {
            live();
            if (alive && id.address() != 0) {
                try {
                    RdmaCm.get().reject(id, ia.wire.consumerReject(pd));
                } catch (VerbsException e) {
                    LOG.debug("rdma_reject failed (the active side may have gone)", e);
                }
            }
            consume();
            ia.objects().count(IaCounter.SP_CR_REJECTED);
        }
        releaseLocalEp();
    }

    /** {@code dat_cr_handoff}: the request arrives again at the PSP of {@code connQual} of this IA. */
    @Override
    public void handoff(long connQual) {
        live();
        synchronized (this) {
            live();
            if (!ia.handoff(this, connQual)) {
                throw DatException.invalidParameter(2, "no PSP of IA " + ia.name() + " listens on " + connQual);
            }
            id = MemorySegment.NULL;
            markFreed();
            ia.objects().remove(HandleType.CR, this);
        }
        releaseLocalEp();
    }

    /** A reject or handoff: a reserved EP is UNCONNECTED again, a provider-created EP is freed. */
    private void releaseLocalEp() {
        if (reservedEp != null) {
            ProviderEps.requestReleased(reservedEp, this);
        }
    }

    @Override
    public void destroy() {
        consume();
    }

    /** Marks the request answered and destroys its ID (IA close, reject). */
    synchronized void consume() {
        markFreed();
        if (id.address() != 0) {
            MemorySegment i = id;
            id = MemorySegment.NULL;
            ia.router().removeCr(i);
            try {
                RdmaCm.get().destroyId(i);
            } catch (VerbsException e) {
                LOG.debug("rdma_destroy_id failed", e);
            }
        }
        ia.objects().remove(HandleType.CR, this);
    }
}
