package org.jdapl.provider.ofa;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofa.verbs.Verbs;

/**
 * An EP: the owner of its parts, each with one job: the PZ, EVDs, SRQ and attributes it is made on
 * and its counts of use on them ({@link EpBinding}), its work ({@link EpWork}: the queue pair and its
 * state changes ({@link QueuePair}), the send queue ({@link SendQueue}: request posts, window binds)
 * and the receive queue ({@link RecvQueue}), each with its ring and completions ({@link WorkQueue})),
 * and the DAT connection state machine over rdma_cm ({@link EpConnection}). The EP checks the arguments of the API
 * calls and creates and destroys its parts; the IA's router hands it the completions and rdma_cm
 * events of its queue pair and ID.
 *
 * <p>An EP of a PSP with {@code PspFlag.PROVIDER} is created without a queue pair, in
 * TENTATIVE_CONNECTION_PENDING ({@link ProviderEps}: DISC_11, FREE_02, FREE_07).
 *
 * <p>Lock order: the IA's lock, a CQ's poll lock, then the EP's lock, then an EVD's queue lock.
 *
 * <p>Behaviours: DISC_11, FREE_02, FREE_07.
 */
final class OfaEp extends OfaHandle implements Endpoint, IaObjects.Owned, OfaRouter.QueuePairOwner {
    final OfaIa ia;
    final EpLock lock = new EpLock();
    private final EpConnection connection;
    /**
     * The EP's DAT state, written by {@link EpConnection} only (under the EP's lock). It lives here,
     * not there, because every post reads it next to the handle's liveness: one object for both.
     */
    volatile EpState state;
    /**
     * Whether a completion must take the long way ({@code WorkQueue.completedOther}): the connection
     * is ending (its terminal event not queued yet) or a graceful disconnect waits for the requests.
     * Written by {@link EpConnection} only.
     */
    boolean ending;
    /** The binding, the queue pair and the queues on it. */
    private final EpWork work;
    /** The EP's counters (DCNT_EP_*), written under its lock by the posts, completions and connection calls. */
    private final Counts counts = Counts.of(EpCounter.class);

    OfaEp(OfaIa ia, OfaPz pz, OfaEvd recvEvd, OfaEvd requestEvd, OfaEvd connectEvd, OfaSrq srq,
                  EpAttributes attributes, EpState initial) {
        super(HandleType.EP);
        this.ia = ia;
        this.work = new EpWork(this, lock, new EpBinding(pz, recvEvd, requestEvd, connectEvd, srq, attributes));
        this.connection = new EpConnection(this, initial, work, ia.router(), ia.wire, ia.loop(), ia.device());
    }

    /**
     * A consumer's new EP ({@link ConsumerEps#create}) takes its queue pair in INIT and counts itself a
     * user of what it is made on (IA lock held).
     */
    void attachFirstQp() {
        try {
            work.attachFirstQp();
        } catch (DatException e) {
            freeNative();
            throw e;
        }
    }

    /** The queue pair of a provider-created EP, made when its request is accepted ({@link EpWork#attachForAccept}). */
    void attachForAccept(String what) {
        work.attachForAccept(what);
    }

    /** The EP's PZ, null for a provider-created EP before {@code dat_ep_modify} (IA lock or EP lock held). */
    OfaPz pz() {
        return work.binding().pz();
    }

    /** The PZ, EVDs, SRQ and attributes the EP is made on (IA lock or EP lock held). */
    EpBinding binding() {
        return work.binding();
    }

    EpConnection connection() {
        return connection;
    }

    @Override
    public void brokenLater(String what) {
        connection.brokenLater(what);
    }

    /** The reserved service point holding the EP, or the request it was reserved or created for. */
    EpReservation reservation() {
        return connection.reservation();
    }

    /** Binds or unbinds a window of {@code rmr} through the EP's send queue ({@link SendQueue#bindWindow}). */
    int bindWindow(OfaRmr rmr, OfaLmr lmr, long offset, long length, int access, long cookie,
                   Set<CompletionFlag> flags) {
        return work.sends().bindWindow(rmr, lmr, offset, length, access, cookie, flags);
    }

    RecvQueue recvQueue() {
        return work.recvs();
    }

    Counts counts() {
        return counts;
    }

    /** {@code dat_query_counters} on the EP. Behaviours: EXT_09. */
    @Override
    public Counters<EpCounter> queryCounters(boolean reset) {
        live();
        return Counts.query(EpCounter.class, reset, counts);
    }

    QueuePair queuePair() {
        return work.queuePair();
    }

    @Override
    public int qpNum() {
        return work.qpNum();
    }

    @Override
    public EpParam query() {
        live();
        lock.lock();
        try {
            EpBinding b = work.binding();
            ConnectionEnds ends = connection.ends();
            return new EpParam(ia, state, ia.address(), ends.localPort(), ends.remoteAddress(),
                    ends.remotePort(), b.pz(), b.recvEvd(), b.requestEvd(), b.connectEvd(), b.srq(),
                    b.attributes());
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code dat_ep_modify}: a provider-created EP in TENTATIVE_CONNECTION_PENDING takes its PZ, EVDs
     * and attributes here; once an EP has its queue pair they are fixed (verbs cannot change a queue
     * pair's CQs or sizes), so any change fails MODEL_NOT_SUPPORTED.
     */
    @Override
    public void modify(EpAttributes attrs, EventDispatcher recv, EventDispatcher request, EventDispatcher connect) {
        modify(null, attrs, recv, request, connect);
    }

    @Override
    public void modify(ProtectionZone newPz, EpAttributes attrs, EventDispatcher recv, EventDispatcher request,
                       EventDispatcher connect) {
        live();
        ia.lock().lock();
        try {
            lock.lock();
            try {
                live();
                EpState state = this.state;
                if (state == EpState.TENTATIVE_CONNECTION_PENDING && work.queuePair() == null) {
                    work.configure(ProviderEps.configured(ia, work.binding(), newPz, attrs, recv, request, connect));
                    return;
                }
                if (state != EpState.UNCONNECTED) {
                    throw state.invalid("dat_ep_modify");
                }
                work.binding().checkUnchanged(newPz, attrs, recv, request, connect);
            } finally {
                lock.unlock();
            }
        } finally {
            ia.lock().unlock();
        }
    }

    // ---- connections: the checks here, the state machine in EpConnection ----

    /** {@code dat_ep_connect}: the connection qualifier is the RDMA_PS_TCP port ({@link PrivateData#port}). */
    @Override
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] data, Qos qos,
                        ConnectFlag flag) {
        live();
        InetSocketAddress target = ConnectArguments.target(remote);
        ConnectArguments.check(timeoutMicros, qos, flag);
        byte[] pd = ia.wire.check(data, 5);
        lock.lock();
        try {
            live();
            connection.connect(new InetSocketAddress(target.getAddress(), PrivateData.port(connQual)), connQual,
                    timeoutMicros, pd);
            counts.inc(EpCounter.CONNECT);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] data, Qos qos) {
        live();
        if (!(dup instanceof OfaEp d) || d.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "dat_ep_dup_connect: no live EP");
        }
        EpParam p = ConnectArguments.duplicated(d.query());
        connect(p.remoteAddress(), p.remotePortQual(), timeoutMicros, data, qos, ConnectFlag.DEFAULT);
    }

    /** {@code dat_ep_common_connect}: the port of the address is the rdma_cm port of the CSP. */
    @Override
    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] data) {
        live();
        InetSocketAddress target = ConnectArguments.commonTarget(remote);
        connect(target, target.getPort(), timeoutMicros, data, Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
    }

    /** {@code dat_cr_accept} with this EP (called by the CR). */
    void accept(OfaCr cr, byte[] data) {
        lock.lock();
        try {
            live();
            connection.accept(cr, data);
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_ep_disconnect}; see {@link EpConnection#disconnect}. */
    @Override
    public void disconnect(CloseFlag flag) {
        live();
        if (flag == null) {
            throw DatException.invalidParameter(2, "null disconnect flag");
        }
        lock.lock();
        try {
            live();
            connection.disconnect(flag);
            counts.inc(EpCounter.DISCONNECT);
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_ep_reset}: a new queue pair replaces the one that carried the connection. Behaviours: DISC_18. */
    @Override
    public void reset() {
        live();
        lock.lock();
        try {
            live();
            connection.checkResettable();
            work.replaceQp();
            connection.resetDone();
        } finally {
            lock.unlock();
        }
    }

    /** Polls the EP's CQs (outside the EP's lock) so that completions already there are seen first. */
    void pollCqs() {
        work.binding().pollCqs();
    }

    // ---- data transfer: the posts are the queues' ----

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        work.sends().post(Verbs.WR_SEND, DtoOperation.SEND, iov, cookie, null, flags, 0);
    }

    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        work.sends().post(invalidate ? Verbs.WR_SEND_WITH_INV : Verbs.WR_SEND, DtoOperation.SEND, iov, cookie, null,
                flags, rmrContext);
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (remote == null) {
            throw DatException.invalidParameter(4, "null RMR triplet");
        }
        work.sends().post(Verbs.WR_RDMA_READ, DtoOperation.RDMA_READ, iov, cookie, remote, flags, 0);
    }

    /** {@code dat_ep_post_rdma_read_to_rmr}: the local side would be a memory window, which verbs cannot scatter to. */
    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_post_rdma_read_to_rmr: a verbs RDMA Read "
                + "scatters into local keys (LMRs), not into memory windows");
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (remote == null) {
            throw DatException.invalidParameter(4, "null RMR triplet");
        }
        work.sends().post(Verbs.WR_RDMA_WRITE, DtoOperation.RDMA_WRITE, iov, cookie, remote, flags, 0);
    }

    /** OFED's extensions: {@link OfaExtensions}. */
    @Override
    public void postFetchAndAdd(long add, LmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> f) {
        live();
        OfaExtensions.fetchAndAdd(work.sends(), ia.device(), add, local, cookie, remote, f);
    }

    @Override
    public void postCompareAndSwap(long compare, long swap, LmrTriplet local, long cookie, RmrTriplet remote,
                                   Set<CompletionFlag> f) {
        live();
        OfaExtensions.compareAndSwap(work.sends(), ia.device(), compare, swap, local, cookie, remote, f);
    }

    @Override
    public void postRdmaWriteWithImmediate(List<LmrTriplet> iov, long cookie, RmrTriplet remote, int immediate,
                                           Set<CompletionFlag> f) {
        OfaExtensions.rdmaWriteWithImmediate(work.sends(), iov, cookie, remote, immediate, f);
    }

    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        work.recvs().post(iov, cookie, flags);
    }

    /** A work completion of this EP's queue pair (poll lock held): to the queue its {@code wr_id} names. */
    @Override
    public void completed(OfaEvd evd, long wc, long wrId) {
        work.completed(evd, wc, wrId);
    }

    /**
     * For the bind of a registration-backed RMR (IA lock held): the EP must be CONNECTED
     * and have a request EVD, which gets the bind event.
     *
     * <p>Behaviours: DISC_07.
     */
    OfaEvd checkBindable() {
        lock.lock();
        try {
            live();
            EpState state = this.state;
            if (state != EpState.CONNECTED) {
                throw state.invalid("dat_rmr_bind");
            }
            OfaEvd requestEvd = work.binding().requestEvd();
            if (requestEvd == null) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                        "the EP has no request EVD for the bind's event");
            }
            return requestEvd;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public EpStatus status() {
        live();
        lock.lock();
        try {
            return new EpStatus(state, work.outstandingRecvs() == 0, work.outstandingSends() == 0);
        } finally {
            lock.unlock();
        }
    }

    // ---- free ----

    /**
     * {@code dat_ep_free}: INVALID_STATE in RESERVED and the pending states of a service point; in
     * every other state the EP goes.
     *
     * <p>Behaviours: FREE_01, FREE_02.
     */
    @Override
    public void free() {
        ia.free(this, () -> {
            EpState st = state;
            if (st == EpState.RESERVED || st == EpState.PASSIVE_CONNECTION_PENDING
                    || st == EpState.TENTATIVE_CONNECTION_PENDING) {
                throw st.invalid("dat_ep_free");
            }
        });
    }

    /**
     * Frees the EP (IA lock held): its ID (a DREQ or REJ for the peer: FREE_03, FREE_04), its queue
     * pair, its queues' CQ room; no further event.
     *
     * <p>Behaviours: FREE_03, FREE_04, FREE_06.
     */
    @Override
    public void destroy() {
        lock.lock();
        try {
            markFreed();
        } finally {
            lock.unlock();
        }
        boolean wasLive = ia.objects().remove(HandleType.EP, this);
        connection.reservation().release();
        lock.lock();
        try {
            connection.release();
        } finally {
            lock.unlock();
        }
        // Completions of the queue pair still in its CQs take room there until polled (and dropped).
        work.destroy(wasLive);
        connection.freeNative();
    }

    private void freeNative() {
        work.freeNative();
        connection.freeNative();
    }

    @Override
    public RecvQuery recvQuery() {
        live();
        if (work.binding().srq() == null) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_recv_query: the EP has no SRQ");
        }
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_ep_recv_query: verbs do not tell how an SRQ's buffers are used per queue pair");
    }

    /**
     * {@code dat_ep_set_watermark} fails MODEL_NOT_SUPPORTED, which the watermark IDs allow a provider
     * (as OFED's uDAPL): verbs do not tell which queue pair took an SRQ's receives until they complete.
     *
     * <p>Behaviours: EP_01, EP_02.
     */
    @Override
    public void setWatermark(int softHighWatermark, int hardHighWatermark) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_ep_set_watermark: verbs SRQs have a low watermark (dat_srq_set_lw) only");
    }

    @Override
    public String toString() {
        return "EP qp " + work.qpNum() + " " + state;
    }
}
