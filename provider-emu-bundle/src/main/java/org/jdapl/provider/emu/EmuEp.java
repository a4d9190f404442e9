package org.jdapl.provider.emu;

import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.provider.emu.evd.Wakeups;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Counters;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;

/**
 * An emulated Endpoint: the DAT object (attributes, PZ, EVDs, free), its posts and their
 * completions; its two work queues are its {@link EpQueues}, its connection state machine its
 * {@link EpConnection}, its EVDs and the events it queues on them its {@link EpEvds}. Every method runs
 * under the lock domain of the IA, so state changes, data movement and event posting of both ends of
 * a connection are ordered; only the common send and receive of a loopback connection take locks of
 * their own EP instead (see {@link org.jdapl.provider.emu.loopback.LoopbackLink}).
 *
 * <p>The request queue is processed in order: its head moves data (a send takes the peer's first
 * receive, an RDMA checks the peer's context and copies), completes, and the next follows. A send
 * that finds no receive waits up to {@link EmuLimits#RNR_RETRY_MILLIS} (as an RC queue pair's RNR
 * retries), then completes RECEIVER_NOT_READY. Any error completion breaks the connection as on RC:
 * both ends get CONNECTION_BROKEN and every later DTO is flushed. Entering DISCONNECTED flushes both
 * queues, so every posted DTO completes exactly once.
 *
 * <p>The file is over 500 lines for a reason: it is the whole {@code Endpoint} API (about thirty
 * calls) and the entry of every post, kept in one place so that a post reads top to bottom, the path
 * without the domain lock first, then the queued one; the work is its parts' ({@link EpConnection},
 * {@link EpQueues}, {@link EpEvds}, {@link DtoChecks}, {@link ExtPosts}, {@link EpArguments}).
 */
public class EmuEp extends EmuObject implements Endpoint {
    private final EmuIa ia;
    private final EmuSrq srq;
    private final boolean providerCreated;
    private volatile EmuPz pz;
    private final EpEvds evds;
    private EpAttributes attributes;
    private final EpConnection connection;
    private final EpQueues queues;
    /** The checks of the EP's posts (a datagram EP's too). */
    final DtoChecks checks;
    private boolean pumpScheduled;

    EmuEp(EmuIa ia, EmuPz pz, EmuEvd recvEvd, EmuEvd requestEvd, EmuEvd connectEvd, EmuSrq srq,
          EpAttributes attributes, EpState initial, boolean providerCreated) {
        super(HandleType.EP);
        this.ia = ia;
        this.pz = pz;
        this.srq = srq;
        this.attributes = attributes;
        this.connection = new EpConnection(this, ia, initial);
        this.queues = new EpQueues(this, ia, srq, attributes.maxRecvDtos(), attributes.srqSoftHighWatermark());
        this.checks = new DtoChecks(this, ia, ia.contexts(), queues::takeSpareSend, queues::takeSpareRdma);
        this.providerCreated = providerCreated;
        this.evds = new EpEvds(this, ia);
        evds.set(recvEvd, requestEvd, connectEvd);
        if (pz != null) {
            pz.use();
        }
        if (srq != null) {
            srq.attach(this);
        }
    }

    @Override
    public EmuIa ia() {
        return ia;
    }

    EmuPz pz() {
        return pz;
    }

    public EpState state() {
        return connection.state;
    }

    /** The connection state machine of this EP. */
    public EpConnection connection() {
        return connection;
    }

    boolean providerCreated() {
        return providerCreated;
    }

    /** The EP's EVDs and the events it queues on them. */
    public EpEvds evds() {
        return evds;
    }

    // ---------------------------------------------------------------- queries

    @Override
    public EpParam query() {
        return ia.locked(() -> {
            checkLive();
            return new EpParam(ia, connection.state, ia.address(), connection.localPortQual,
                    connection.remoteAddress, connection.remotePortQual, pz, evds.recv(),
                    evds.request(), evds.connect(), srq, attributes);
        });
    }

    @Override
    public EpStatus status() {
        return ia.locked(() -> {
            checkLive();
            return queues.status(connection.state);
        });
    }

    @Override
    public RecvQuery recvQuery() {
        return ia.locked(() -> {
            checkLive();
            return queues.recvQuery();
        });
    }

    @Override
    public void setWatermark(int soft, int hard) {
        ia.locked(() -> {
            checkLive();
            queues.setWatermark(soft, hard);
        });
    }

    // ---------------------------------------------------------------- configuration

    @Override
    public void modify(EpAttributes newAttributes, EventDispatcher recv, EventDispatcher request,
                       EventDispatcher connect) {
        modify(null, newAttributes, recv, request, connect);
    }

    @Override
    public void modify(ProtectionZone newPz, EpAttributes newAttributes, EventDispatcher recv,
                       EventDispatcher request, EventDispatcher connect) {
        ia.locked(() -> {
            checkLive();
            EpState state = connection.state;
            if (state != EpState.UNCONNECTED && !(providerCreated && state == EpState.TENTATIVE_CONNECTION_PENDING)) {
                throw state.invalid("dat_ep_modify");
            }
            EpArguments now = new EpArguments(pz, evds.recv(), evds.request(), evds.connect(), attributes);
            EpArguments a = EpArguments.resolve(ia, now, newPz, recv, request, connect, srq, newAttributes);
            EmuPz z = a.pz();
            EpAttributes attrs = a.attributes();
            if (z != pz) {
                z.use();
                if (pz != null) {
                    pz.unuse();
                }
                pz = z;
            }
            if (attrs.maxRecvDtos() != attributes.maxRecvDtos()) {
                queues.resizeReceives(attrs.maxRecvDtos());
            }
            attributes = attrs;
            evds.set(a.recv(), a.request(), a.connect());
        });
    }

    @Override
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                        ConnectFlag flag) {
        evds.counts().inc(EpCounter.CONNECT.ordinal());
        connection.connect(remote, connQual, timeoutMicros, privateData, qos, flag);
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos) {
        connection.dupConnect(dup, timeoutMicros, privateData, qos);
    }

    @Override
    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] privateData) {
        connection.commonConnect(remote, timeoutMicros, privateData);
    }

    @Override
    public void disconnect(CloseFlag flag) {
        evds.counts().inc(EpCounter.DISCONNECT.ordinal());
        connection.disconnect(flag);
    }

    /** The request queue, head first (the links process it; see {@link EpQueues}). */
    public ArrayDeque<WorkRequest> requests() {
        return queues.requests();
    }

    /** The EP's work queues. */
    public EpQueues queues() {
        return queues;
    }

    EpAttributes attributes() {
        return attributes;
    }
    /** Behaviours: DISC_18: a DISCONNECTED EP is reset to UNCONNECTED and can connect again. */
    @Override
    public void reset() {
        ia.locked(() -> {
            checkLive();
            connection.reset();
        });
    }

    /** Behaviours: FREE_01, FREE_02, FREE_05. */
    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            EpState state = connection.state;
            if (state == EpState.RESERVED || state == EpState.PASSIVE_CONNECTION_PENDING
                    || state == EpState.TENTATIVE_CONNECTION_PENDING) {
                throw state.invalid("dat_ep_free");
            }
            teardown(false);
            ia.forget(this);
        });
    }

    /**
     * Destroys the EP whatever its state (fabric lock held): establishment is aborted, a connection
     * closed (the peer gets DISCONNECTED, or BROKEN when {@code broken}), outstanding DTOs flushed.
     * After this no event of the EP is posted anywhere.
     *
     * <p>Behaviours: FREE_03, FREE_04, FREE_06.
     */
    void teardown(boolean broken) {
        connection.teardown(broken);
        queues.flush();
        detach();
        markFreed();
    }

    void detach() {
        evds.set(null, null, null);
        if (pz != null) {
            pz.unuse();
        }
        if (srq != null) {
            srq.detach(this);
        }
        ia.revokeEpScopeRmrs(this);
    }

    // ---------------------------------------------------------------- posting

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        postSendWithInvalidate(iov, cookie, flags, false, 0);
    }

    /** Behaviours: OBJ_07, LMR_04. Without the domain lock or a work request if the link moves it at once. */
    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        Link l = connection.link();
        if (l != null && flags != null && !invalidate && connection.state == EpState.CONNECTED && !isFreed()) {
            DtoChecks.Checked c = checks.message(iov, true);
            if (l.trySend(this, c.iov(), c.length(), cookie, WorkRequest.bitsOf(flags))) {
                return;
            }
        }
        ReentrantLock lock = ia.domain().acquire();
        try {
            checkLive();
            DtoChecks.flags(flags, 3);
            requireConnected("dat_ep_post_send");
            WorkRequest.Send send = checks.send(iov, cookie, flags, invalidate, rmrContext);
            requireRequestSlot();
            queues.addRequest(send);
            kick();
        } finally {
            Wakeups.release(lock);
        }
    }

    /**
     * Without the domain lock on a CONNECTED EP whose link allows it ({@link EpQueues#addRecvIfConnected}),
     * taking it only if a send of the peer waits for a receive. Behaviours: DISC_02, DISC_08.
     */
    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        Link l = connection.link();
        if (l != null && l.postsReceivesWithoutLock() && flags != null && srq == null
                && connection.state == EpState.CONNECTED && !isFreed()) {
            EpQueues.Posted posted = queues.addRecvIfConnected(checks, iov, cookie, flags, attributes.maxRecvDtos(), l);
            if (posted == EpQueues.Posted.QUEUED_PEER_WAITS) {
                ia.locked(this::receiveAvailable);
            }
            if (posted != EpQueues.Posted.NOT_CONNECTED) {
                return;
            }
        }
        ReentrantLock lock = ia.domain().acquire();
        try {
            checkLive();
            DtoChecks.flags(flags, 4);
            if (srq != null) {
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        "the EP takes its receives from an SRQ; post them there");
            }
            WorkRequest.Recv r = checks.recv(iov, cookie, flags, queues.takeSpareRecv());
            if (connection.state == EpState.DISCONNECTED) {
                completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
                return;
            }
            queues.addRecv(r, attributes.maxRecvDtos());
            receiveAvailable();
        } finally {
            Wakeups.release(lock);
        }
    }

    /** A receive became available to this EP (its own or its SRQ's): the peer's sends may proceed. */
    void receiveAvailable() {
        if (connection.linkOpen()) {
            connection.link().receivePosted(this);
        }
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        postRdma(true, iov, null, cookie, remote, flags);
    }

    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (local == null) {
            throw DatException.invalidParameter(2, "no local RMR triplet");
        }
        postRdma(true, null, local, cookie, remote, flags);
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        postRdma(false, iov, null, cookie, remote, flags);
    }

    /**
     * Behaviours: OBJ_08, LMR_04, LMR_06. A link that can move the bytes at once does so with no work
     * request ({@link Link#tryRdma}); the local segments' checks are memoised per EP.
     */
    private void postRdma(boolean read, List<LmrTriplet> iov, RmrTriplet localTarget, long cookie, RmrTriplet remote,
                          Set<CompletionFlag> flags) {
        ReentrantLock lock = ia.domain().acquire();
        try {
            checkLive();
            DtoChecks.flags(flags, 5);
            requireConnected(read ? "dat_ep_post_rdma_read" : "dat_ep_post_rdma_write");
            if (localTarget == null) {
                DtoChecks.Checked c = checks.rdmaLocal(read, iov, remote);
                Link l = connection.link();
                if (l != null && connection.linkOpen() && queues.requests().isEmpty()
                        && l.tryRdma(this, read, c.iov(), c.length(), cookie, remote, WorkRequest.bitsOf(flags))) {
                    return;
                }
            }
            WorkRequest.Rdma rdma = checks.rdma(read, iov, localTarget, cookie, remote, flags);
            requireRequestSlot();
            queues.addRequest(rdma);
            kick();
        } finally {
            Wakeups.release(lock);
        }
    }

    /** Behaviours: EXT_01, EXT_02, EXT_03, EXT_04 (see {@link ExtPosts}). */
    @Override
    public void postFetchAndAdd(long add, LmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        ExtPosts.atomic(this, ExtensionType.FETCH_AND_ADD, add, 0, local, cookie, remote, flags);
    }

    /** Behaviours: EXT_01, EXT_03. */
    @Override
    public void postCompareAndSwap(long compare, long swap, LmrTriplet local, long cookie, RmrTriplet remote,
                                   Set<CompletionFlag> flags) {
        ExtPosts.atomic(this, ExtensionType.CMP_AND_SWAP, compare, swap, local, cookie, remote, flags);
    }

    /** Behaviours: EXT_05, EXT_06. */
    @Override
    public void postRdmaWriteWithImmediate(List<LmrTriplet> iov, long cookie, RmrTriplet remote, int immediateData,
                                           Set<CompletionFlag> flags) {
        ExtPosts.writeImmediate(this, checks, iov, cookie, remote, immediateData, flags);
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<EpCounter> queryCounters(boolean reset) {
        checkLive();
        return Counts.query(EpCounter.class, reset, evds.counts(), evds.peerCounts());
    }

    /** {@code dat_rmr_bind} through this EP (fabric lock held). */
    int postBind(EmuRmr rmr, LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges,
                 VaType vaType, long cookie, Set<CompletionFlag> flags) {
        DtoChecks.flags(flags, 8);
        if (rmr.pz() != pz) {
            throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the RMR and the EP are of different PZs");
        }
        requireConnected("dat_rmr_bind");
        EmuRmr.Binding binding = length == 0 ? null
                : checks.binding(ia.own(lmr, EmuLmr.class, HandleType.LMR), offset, length, privileges, vaType);
        requireRequestSlot();
        rmr.apply(binding);
        queues.addRequest(new WorkRequest.Bind(rmr, binding, cookie, flags));
        kick();
        return binding == null ? 0 : binding.context();
    }

    /** Behaviours: DISC_07: posting while DISCONNECT_PENDING (or not connected) fails INVALID_STATE. */
    void requireConnected(String operation) {
        if (connection.state != EpState.CONNECTED) {
            throw connection.state.invalid(operation);
        }
    }

    void requireRequestSlot() {
        queues.requireRequestSlot(attributes.maxRequestDtos());
    }

    // ---------------------------------------------------------------- processing

    /**
     * Processes the request queue (fabric lock held). On an open connection the poster's thread moves
     * the data itself, with no hand-off to another thread: the loopback link copies into the peer's
     * memory, the tcp link writes the frames. Otherwise (a graceful disconnect waiting for its queue to
     * drain) the IA's thread makes one pass after the call returns; several kicks make one pass.
     */
    public void kick() {
        if (connection.linkOpen()) {
            pumpRequests();
            return;
        }
        if (!pumpScheduled) {
            pumpScheduled = true;
            ia.later(() -> {
                pumpScheduled = false;
                if (!isFreed()) {
                    pumpRequests();
                }
            });
        }
    }

    /** Processes the request queue in order as far as it can go now (fabric lock held). */
    public void pumpRequests() {
        Link l = connection.link();
        if (l == null || !connection.linkOpen()) {
            if (queues.requests().isEmpty()) {
                connection.tryFinishGraceful();
            }
            return;
        }
        l.pump(this);
    }

    /** Completes the head request with an error and breaks the connection, as RC does. */
    public boolean fail(WorkRequest wr, DtoStatus status) {
        queues.requests().pollFirst();
        completeRequest(wr, status, 0);
        connection.breakLink();
        return true;
    }

    public void completeRequest(WorkRequest wr, DtoStatus status, long length) {
        wr.markCompleted();
        if (wr instanceof WorkRequest.Bind bind) {
            evds.bindCompleted(bind, status);
        } else if (wr instanceof WorkRequest.Ext x) {
            evds.extendedCompleted(false, x.cookie, x.flagBits(), status, length, x.type, 0, null);
        } else {
            completeDto(wr.cookie, wr.flagBits(), status, length, wr.operation());
        }
    }

    /** Completes a DTO request from its cookie and flags (a loopback send moved at once has no work request). */
    public void completeDto(long cookie, int flagBits, DtoStatus status, long length, DtoOperation op) {
        evds.requestCompleted(cookie, flagBits, status, length, op);
    }

    /**
     * Hands a request that completed and that nothing refers to any more to the EP's next post of its
     * kind (domain lock held; see {@link EpQueues#recycle}).
     */
    public void recycle(WorkRequest wr) {
        queues.recycle(wr);
    }

    /** Completes a receive once: a second completion fails before its event, the mark follows the event. */
    public void completeRecv(WorkRequest.Recv r, DtoStatus status, long length, DtoOperation op, int rmrContext) {
        r.checkNotCompleted();
        completeTakenRecv(r.cookie, r.flagBits(), status, length, op, rmrContext);
        r.markCompleted();
    }

    /**
     * Completes a receive that an RDMA Write with immediate data consumed: RDMA_WRITE_IMMED_DATA with
     * the write's length and the immediate data, or FLUSHED, once. Behaviours: EXT_05, EXT_06.
     */
    public void completeRecvImmediate(WorkRequest.Recv r, DtoStatus status, long length, int immediateData) {
        r.checkNotCompleted();
        evds.extendedCompleted(true, r.cookie, r.flagBits(), status, length, ExtensionType.RDMA_WRITE_IMMED_DATA,
                immediateData, null);
        r.markCompleted();
    }

    /** Completes a receive from the cookie and flags a {@link RecvRing} keeps beside its head (taken once). */
    public void completeTakenRecv(long cookie, int flagBits, DtoStatus status, long length, DtoOperation op,
                           int rmrContext) {
        evds.recvCompleted(cookie, flagBits, status, length, op, rmrContext);
    }
}
