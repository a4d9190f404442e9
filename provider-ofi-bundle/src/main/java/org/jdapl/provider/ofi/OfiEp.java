package org.jdapl.provider.ofi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Counters;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiInfo;

/**
 * An EP: the DAT endpoint over a libfabric MSG endpoint that it creates for each connection (from the
 * IA's {@code fi_info} to connect, from the request's to accept) and closes when the connection ends
 * ({@link EpConnection}). Its queues and data path are {@link EpData}; receives posted before there is
 * an endpoint wait in their slots and are posted when it is created.
 *
 * <p>Length (over 500 lines): the class is the whole face of DAT's {@code Endpoint} — about forty
 * methods (query, modify, connect and its variants, disconnect, the posts, RMR bind, reset, the SRQ
 * queries, counters) with their argument checks; the connection ({@link EpConnection}), the data path
 * ({@link EpData}, {@link EpPosts}) and the credits ({@link MsgCredits}) are classes of their own.
 *
 * <p>Behaviours: CONN_01, CONN_08, CONN_09, CONN_12, FREE_01, FREE_02, FREE_05, FREE_06, DISC_07.
 */
final class OfiEp extends OfiObject implements Endpoint {
    final int id;
    /** Requests wait for a receive credit, or a count of receives is due to the peer ({@link HeldRequests#holding}). */
    volatile boolean holding;
    private volatile OfiPz pz;
    private volatile OfiEvd recvEvd;
    private volatile OfiEvd requestEvd;
    private volatile OfiEvd connectEvd;
    private volatile EpAttributes attributes;
    final EpData data;
    final Connection conn;
    /** The EP's part of its SRQ (its receive CQ, the receives it took, its watermark), or null. */
    final EpSrq srq;
    /** The EP's counters (DAT_COUNTERS), written under its lock. */
    final OfiCounts counts = new OfiCounts(EpCounter.values().length);

    OfiEp(OfiIa ia, OfiPz pz, OfiEvd recvEvd, OfiEvd requestEvd, OfiEvd connectEvd, EpAttributes attributes) {
        this(ia, pz, recvEvd, requestEvd, connectEvd, null, attributes);
    }

    OfiEp(OfiIa ia, OfiPz pz, OfiEvd recvEvd, OfiEvd requestEvd, OfiEvd connectEvd, OfiSrq srq,
          EpAttributes attributes) {
        super(ia, HandleType.EP);
        checkAttributes(ia, attributes);
        if (srq != null && srq.pz != pz) {
            throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the SRQ belongs to another PZ");
        }
        this.id = (int) ia.nextId();
        this.pz = pz;
        this.recvEvd = recvEvd;
        this.requestEvd = requestEvd;
        this.connectEvd = connectEvd;
        this.attributes = attributes;
        this.data = new EpData(this, id, attributes.maxRecvDtos(), attributes.maxRequestDtos());
        this.conn = ia.rdm != null ? new RdmConnection(this) : new EpConnection(this);
        if (srq != null) {
            this.srq = new EpSrq(this, srq, Math.max(OfiSrq.MAX_DEPTH, 256), attributes.srqSoftHighWatermark());
            srq.users.incrementAndGet();
            this.srq.attach(recvEvd);
        } else {
            this.srq = null;
        }
        for (OfiEvd e : new OfiEvd[] {recvEvd, requestEvd, connectEvd}) {
            if (e != null) {
                e.users.incrementAndGet();
            }
        }
        if (pz != null) {
            pz.users.incrementAndGet();
        }
        ia.eps.put(id, this);
        ia.held.ep(this, true);
        ia.added(this);
    }

    private static void checkAttributes(OfiIa ia, EpAttributes a) {
        if (a.maxRecvDtos() > ia.maxQueue || a.maxRequestDtos() > ia.maxQueue) {
            throw DatException.invalidParameter(6, "queue depths over the provider's " + ia.maxQueue);
        }
        if (a.maxRecvIov() > ia.iovLimit || a.maxRequestIov() > ia.iovLimit) {
            throw DatException.invalidParameter(6, "more than " + ia.iovLimit + " segments per DTO");
        }
        if (a.maxMessageSize() > ia.maxMsgSize) {
            throw DatException.invalidParameter(6, "message size over the provider's " + ia.maxMsgSize);
        }
    }

    static OfiEp of(OfiIa ia, Endpoint ep) {
        if (!(ep instanceof OfiEp e) || e.ia != ia || e.freed) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "not a live EP of this IA");
        }
        return e;
    }

    OfiPz pz() {
        return pz;
    }

    OfiEvd recvEvd() {
        return recvEvd;
    }

    OfiEvd requestEvd() {
        return requestEvd;
    }

    OfiEvd connectEvd() {
        return connectEvd;
    }

    EpAttributes attributes() {
        return attributes;
    }

    /** A completion of a receive of the EP's SRQ, read from its own receive CQ. */
    synchronized void srqCompleted(long context, int err, long len) {
        conn.completionBeforeConnected();
        if (srq.completed(context, err, len)) {
            conn.afterCompletion(err);
        }
    }

    /** A receive of the EP's SRQ that an RDMA Write with immediate data consumed. */
    synchronized void srqCompletedWithData(long context, long cqData) {
        conn.completionBeforeConnected();
        if (srq.completedWithData(context, cqData)) {
            conn.afterCompletion(0);
        }
    }

    /** A completion read from a CQ (the CQ's lock is held). */
    synchronized void completed(long context, int err, long len) {
        conn.completionBeforeConnected();
        if (err == 0 && OfiExtensions.isWriteHalf(context)) {
            return; // the message half completes the DTO
        }
        if (err == Fi.FI_ECANCELED && conn.cancelled(context)) {
            return; // outstanding until the connection knows why the provider cancelled it
        }
        if (data.completed(context, err, len)) {
            conn.afterCompletion(err);
        }
    }

    /** Posts what waits for a receive credit ({@link EpData#pump}); the number posted. */
    synchronized int pumpHeld() {
        if (freed) {
            ia.held.holding(this, false);
            return 0;
        }
        return data.pump(conn.fid());
    }

    /** A receive completion with remote CQ data (an RDMA Write with immediate data took it). */
    synchronized void completedWithData(long context, long cqData) {
        conn.completionBeforeConnected();
        if (data.completedWithData(context, cqData)) {
            conn.afterCompletion(0);
        }
    }

    @Override
    public synchronized EpParam query() {
        live();
        InetSocketAddress r = conn.remoteAddress();
        return new EpParam(ia, conn.state(), ia.address, conn.localPort(),
                r == null ? null : new InetSocketAddress(r.getAddress(), 0), conn.remotePort(), pz,
                recvEvd, requestEvd, connectEvd, srq == null ? null : srq.srq, attributes);
    }

    /**
     * {@code dat_ep_modify} with a PZ: an UNCONNECTED EP, or a provider-created one in
     * TENTATIVE_CONNECTION_PENDING (which has none until then), moves to {@code newPz}.
     */
    @Override
    public synchronized void modify(ProtectionZone newPz, EpAttributes attrs, EventDispatcher recv,
                                    EventDispatcher request, EventDispatcher connect) {
        live();
        OfiPz p = newPz == null ? null : OfiPz.of(ia, newPz, 1);
        modify(attrs, recv, request, connect);
        if (p != null && p != pz) {
            if (!data.recvIdle() || !data.requestIdle()) {
                throw DatException.invalidState(Connection.subtype(conn.state()), "DTOs are outstanding");
            }
            p.users.incrementAndGet();
            OfiPz old = pz;
            pz = p;
            if (old != null) {
                old.users.decrementAndGet();
            }
        }
    }

    @Override
    public synchronized void modify(EpAttributes attrs, EventDispatcher recv, EventDispatcher request,
                                    EventDispatcher connect) {
        live();
        EpState s = conn.state();
        if (s != EpState.UNCONNECTED && s != EpState.TENTATIVE_CONNECTION_PENDING) {
            throw DatException.invalidState(Connection.subtype(s), "dat_ep_modify in " + s);
        }
        if (attrs != null && (attrs.maxRecvDtos() != attributes.maxRecvDtos()
                || attrs.maxRequestDtos() != attributes.maxRequestDtos())) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the queue depths of an EP cannot change");
        }
        OfiEvd r = recv == null ? recvEvd : OfiEvd.of(ia, recv, DatReturnSubtype.INVALID_HANDLE_EVD_RECV);
        OfiEvd q = request == null ? requestEvd : OfiEvd.of(ia, request, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST);
        OfiEvd c = connect == null ? connectEvd : OfiEvd.of(ia, connect, DatReturnSubtype.INVALID_HANDLE_EVD_CONN);
        if ((r != recvEvd && !data.recvIdle()) || (q != requestEvd && !data.requestIdle())) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED, "DTOs are outstanding");
        }
        if (attrs != null) {
            checkAttributes(ia, attrs);
            attributes = attrs;
        }
        if (srq != null) {
            srq.attach(r);
        }
        swap(recvEvd, r);
        swap(requestEvd, q);
        swap(connectEvd, c);
        recvEvd = r;
        requestEvd = q;
        connectEvd = c;
    }

    private static void swap(OfiEvd old, OfiEvd now) {
        if (old != now) {
            if (now != null) {
                now.users.incrementAndGet();
            }
            if (old != null) {
                old.users.decrementAndGet();
            }
        }
    }

    @Override
    public void connect(SocketAddress remoteAddress, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                        ConnectFlag flag) {
        live();
        checkConnectArgs(timeoutMicros, privateData, qos);
        if (flag == null) {
            throw DatException.invalidParameter(7, "null connect flag");
        }
        if (flag == ConnectFlag.MULTIPATH_REQUIRED) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "no multipath connections");
        }
        InetSocketAddress target = OfiIa.target(remoteAddress, connQual);
        conn.connect(target, timeoutMicros, privateData);
        counts.inc(EpCounter.CONNECT);
    }

    private void checkConnectArgs(long timeoutMicros, byte[] privateData, Qos qos) {
        if (timeoutMicros <= 0) {
            throw DatException.invalidParameter(4, "the timeout must be positive or TIMEOUT_INFINITE");
        }
        if (privateData != null && privateData.length > ia.maxPrivateData) {
            throw DatException.invalidParameter(5, privateData.length + " bytes of private data, at most "
                    + ia.maxPrivateData);
        }
        if (qos == null) {
            throw DatException.invalidParameter(6, "null QoS");
        }
        if (qos != Qos.BEST_EFFORT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "QoS " + qos + " is not supported");
        }
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos) {
        live();
        OfiEp d = of(ia, dup);
        if (d.conn.state() != EpState.CONNECTED) {
            throw DatException.invalidState(Connection.subtype(d.conn.state()), "the EP to duplicate is not connected");
        }
        checkConnectArgs(timeoutMicros, privateData, qos);
        InetSocketAddress r = d.conn.remoteAddress();
        conn.connect(new InetSocketAddress(r.getAddress(), (int) d.conn.remotePort()), timeoutMicros, privateData);
    }

    @Override
    public void commonConnect(SocketAddress remoteAddress, long timeoutMicros, byte[] privateData) {
        live();
        checkConnectArgs(timeoutMicros, privateData, Qos.BEST_EFFORT);
        if (!(remoteAddress instanceof InetSocketAddress in)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, "not an IPv4 socket address: " + remoteAddress);
        }
        conn.connect(OfiIa.target(in, in.getPort()), timeoutMicros, privateData);
    }

    @Override
    public void disconnect(CloseFlag flag) {
        live();
        if (flag == null) {
            throw DatException.invalidParameter(2, "null close flag");
        }
        conn.disconnect(flag);
        counts.inc(EpCounter.DISCONNECT);
    }

    /**
     * {@code dat_ib_post_rdma_write_immed}: a request like the others, in order with them; it takes a
     * receive credit as a send does ({@link EpData#postRequest}, {@link OfiExtensions}).
     * Behaviours: EXT_05, EXT_06, EXT_07.
     */
    @Override
    public void postRdmaWriteWithImmediate(List<LmrTriplet> iov, long cookie, RmrTriplet remote, int immediateData,
                                           Set<CompletionFlag> flags) {
        live();
        makeRoom();
        synchronized (this) {
            live();
            OfiExtensions.requireOffered(ia, "dat_ib_post_rdma_write_immed");
            if (remote == null) {
                throw DatException.invalidParameter(4, "no remote segment");
            }
            conn.checkCanPost();
            data.postRequest(conn.fid(), DtoOperation.RDMA_WRITE, iov, cookie, remote, flags,
                    attributes.maxRequestIov(), ExtensionType.RDMA_WRITE_IMMED, immediateData);
        }
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<EpCounter> queryCounters(boolean reset) {
        live();
        return OfiCounts.query(EpCounter.class, reset, List.of(counts));
    }

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        postRequest(DtoOperation.SEND, iov, cookie, null, flags);
    }

    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        if (invalidate) {
            live();
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "libfabric has no send with invalidate");
        }
        postRequest(DtoOperation.SEND, iov, cookie, null, flags);
    }

    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        live();
        synchronized (this) {
            live();
            if (srq != null) {
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        "the EP takes its receives from an SRQ; post them there");
            }
            EpState s = conn.state();
            if (s == EpState.DISCONNECTED) {
                data.flushRecvNow(iov, cookie, flags, attributes.maxRecvIov());
                return;
            }
            data.postRecv(conn.fid(), iov, cookie, flags, attributes.maxRecvIov());
        }
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (remote == null) {
            throw DatException.invalidParameter(4, "no remote segment");
        }
        postRequest(DtoOperation.RDMA_READ, iov, cookie, remote, flags);
    }

    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "RDMA Read into an RMR is not supported");
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (remote == null) {
            throw DatException.invalidParameter(4, "no remote segment");
        }
        postRequest(DtoOperation.RDMA_WRITE, iov, cookie, remote, flags);
    }

    private void postRequest(DtoOperation op, List<LmrTriplet> iov, long cookie, RmrTriplet remote,
                             Set<CompletionFlag> flags) {
        live();
        makeRoom();
        synchronized (this) {
            live();
            conn.checkCanPost();
            data.postRequest(conn.fid(), op, iov, cookie, remote, flags, attributes.maxRequestIov());
        }
    }

    /**
     * Before a request is posted: on a MSG endpoint whose request queue looks full, the request EVD's
     * CQ is read once, outside the EP's lock (the CQ's lock comes before it), since the signalled
     * completion that retires the unsignalled requests holding the queue may be there
     * ({@link EpData#requestsFullUnread}). The look is without the lock: at worst a read too many or
     * too few, and the post under the lock decides.
     */
    private void makeRoom() {
        OfiEvd evd = requestEvd;
        if (evd != null && data.requestsFullUnread()) {
            evd.readForPost();
        }
    }

    /** An RMR bind through this EP: registers the range and queues the bind event. */
    synchronized int bindRmr(OfiRmr rmr, OfiLmr lmr, long off, long len, Set<MemPriv> privs, VaType va, long cookie,
                             Set<CompletionFlag> flags) {
        live();
        conn.checkCanBind();
        int ctx = rmr.rebind(lmr, off, len, privs == null ? Dat.MEM_PRIV_NONE : privs, va);
        data.bindCompleted(rmr, cookie, flags != null && flags.contains(CompletionFlag.SUPPRESS));
        return ctx;
    }

    @Override
    public synchronized EpStatus status() {
        live();
        return new EpStatus(conn.state(), data.recvIdle(), data.requestIdle());
    }

    @Override
    public void free() {
        live();
        EpState s = conn.state();
        if (s == EpState.RESERVED || s == EpState.PASSIVE_CONNECTION_PENDING
                || s == EpState.TENTATIVE_CONNECTION_PENDING) {
            throw DatException.invalidState(Connection.subtype(s), "dat_ep_free in " + s);
        }
        destroy(true);
        ia.removed(this);
    }

    /** At the IA's close: the EP goes, its outstanding DTOs without events (their EVDs go too). */
    @Override
    void destroy() {
        destroy(false);
    }

    /**
     * The EP goes: its connection and endpoint, then its outstanding DTOs: at {@code dat_ep_free}
     * ({@code flush}) each completes FLUSHED before free returns, as the emulated provider's do, so
     * that every posted DTO completes exactly once and none after free (soak's {@code epfree});
     * at the IA's close they go without events. Behaviours: FREE_06.
     */
    private void destroy(boolean flush) {
        boolean[] done = new boolean[1];
        // The CQs' locks before the EP's, as a CQ reader takes them: the endpoint closes while no read
        // of its CQs is inside the provider (RDM_PROTOCOL.md, Progress).
        Connection.underCqLocks(recvEvd, requestEvd, () -> done[0] = release(flush));
        if (!done[0]) {
            return;
        }
        ia.progress.deadlines.remove(this);
        ia.eps.remove(id);
        ia.held.ep(this, false);
        for (OfiEvd e : new OfiEvd[] {recvEvd, requestEvd, connectEvd}) {
            if (e != null) {
                e.users.decrementAndGet();
            }
        }
        OfiPz p = pz;
        if (p != null) {
            p.users.decrementAndGet();
        }
        data.close();
    }

    /** Releases the connection and the DTOs ({@link #destroy}); false if the EP was freed already. */
    private synchronized boolean release(boolean flush) {
        if (freed) {
            return false;
        }
        freed = true;
        conn.release();
        if (flush) {
            data.flush();
        } else {
            data.discard();
        }
        if (srq != null) {
            srq.close();
            srq.srq.users.decrementAndGet();
        }
        return true;
    }

    @Override
    public synchronized void reset() {
        live();
        conn.reset();
    }

    /** {@code dat_ep_recv_query}: the receives the EP took from its SRQ (MODEL_NOT_SUPPORTED without one). */
    @Override
    public synchronized RecvQuery recvQuery() {
        live();
        if (srq == null) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the EP has no SRQ");
        }
        return srq.recvQuery();
    }

    /** {@code dat_ep_set_watermark} of an EP on an SRQ ({@link EpSrq}); MODEL_NOT_SUPPORTED without one. */
    @Override
    public synchronized void setWatermark(int softHighWatermark, int hardHighWatermark) {
        live();
        if (srq == null) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "watermarks apply to EPs with an SRQ");
        }
        srq.setWatermark(softHighWatermark, hardHighWatermark);
    }

    /** The connect time-out passed (the progress thread). */
    void connectTimedOut() {
        conn.timedOut();
    }

    /** The IA is aborted: the connection is broken. */
    void broken() {
        conn.terminate(EventNumber.CONNECTION_BROKEN, null);
    }

    static byte[] bytes(long addr, long len) {
        byte[] b = new byte[(int) Math.max(0, len)];
        if (b.length > 0) {
            MemorySegment.copy(org.jdapl.provider.ofi.fabric.FiCalls.MEM, ValueLayout.JAVA_BYTE, addr, b, 0, b.length);
        }
        return b;
    }

    static MemorySegment nativeBytes(Arena a, byte[] b) {
        MemorySegment s = a.allocate(Math.max(1, b.length));
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        return s;
    }

    static InetSocketAddress peerOf(long info) {
        return FiInfo.destAddr(info);
    }

    static void check(FiException e) {
        throw FiErrors.toDat(e);
    }
}
