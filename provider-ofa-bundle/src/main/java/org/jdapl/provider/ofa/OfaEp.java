package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Structs.IbvMw;
import org.jdapl.provider.ofa.verbs.Structs.IbvMwBind;
import org.jdapl.provider.ofa.verbs.Structs.IbvMwBindInfo;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvRecvWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSendWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.Structs.RdmaConnParam;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsContext;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An EP: an RC queue pair of our own ({@code ibv_create_qp}, moved through INIT, RTR and RTS with
 * {@code rdma_init_qp_attr}) and an rdma_cm ID per connection. Work requests are built in native
 * memory the EP allocates once and posted through {@code ibv_context.ops}; the rings
 * ({@link WorkRing}) know every outstanding request, so that each completes exactly once.
 *
 * <p>A connection ends with one terminal connection event (DISCONNECTED, BROKEN, PEER_REJECTED, ...)
 * which is queued only after the queue pair is in the error state and every outstanding request has
 * completed (flushed or not), and, for a connection that was established, after rdma_cm's
 * TIMEWAIT_EXIT: no byte moves after the event, all completions precede it, and the queue pair is
 * never reused (a reset creates a new one). A graceful disconnect first waits for the outstanding
 * request DTOs, then sends the DREQ and completes when the peer's DREP arrives (the NetworkDirect
 * scheme); an abrupt one moves the queue pair to the error state at once.
 *
 * <p>Lock order: a CQ's poll lock, then the EP's lock, then an EVD's queue lock.
 */
final class OfaEp extends OfaHandle implements Endpoint {
    private static final Logger LOG = LoggerFactory.getLogger(OfaEp.class);
    /** How long rdma_resolve_addr and rdma_resolve_route may take. */
    private static final int RESOLVE_MILLIS = 2000;
    /** How long the DISCONNECTED event waits for TIMEWAIT_EXIT before it is queued anyway. */
    private static final long TIMEWAIT_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** RNR retry count 7: a send waits for the peer's receive without limit. */
    private static final int RNR_RETRY_INFINITE = 7;

    final OfaIa ia;
    final OfaPz pz;
    final OfaEvd recvEvd;
    final OfaEvd requestEvd;
    final OfaEvd connectEvd;
    final OfaSrq srq;
    final EpAttributes attributes;
    final EpLock lock = new EpLock();

    /*
     * The work request members the posts write, as plain offsets: a post writes them with stores that
     * the JIT compiles into it (CField's accessors are calls where the post is compiled first).
     */
    private static final long SEND_WR_ID = IbvSendWr.WR_ID.offset();
    private static final long SEND_SG_LIST = IbvSendWr.SG_LIST.offset();
    private static final long SEND_NUM_SGE = IbvSendWr.NUM_SGE.offset();
    private static final long SEND_OPCODE = IbvSendWr.OPCODE.offset();
    private static final long SEND_FLAGS = IbvSendWr.SEND_FLAGS.offset();
    private static final long SEND_INVALIDATE_RKEY = IbvSendWr.INVALIDATE_RKEY.offset();
    private static final long SEND_REMOTE_ADDR = IbvSendWr.REMOTE_ADDR.offset();
    private static final long SEND_RKEY = IbvSendWr.RKEY.offset();
    private static final long RECV_WR_ID = IbvRecvWr.WR_ID.offset();
    private static final long RECV_NUM_SGE = IbvRecvWr.NUM_SGE.offset();
    private static final long SGE_BYTES = IbvSge.S.size();
    private static final long SGE_ADDR = IbvSge.ADDR.offset();
    private static final long SGE_LENGTH = IbvSge.LENGTH.offset();
    private static final long SGE_LKEY = IbvSge.LKEY.offset();

    /** The inline data asked of each queue pair: sends and RDMA Writes up to this size are copied at post. */
    static final int INLINE_MAX = 64;
    /** The bytes the inline buffer has beyond {@link #INLINE_MAX}, which {@link #copySmall} may write. */
    static final int INLINE_SLACK = Long.BYTES - 1;

    /** The device's verbs, whose data-path downcalls the posts make. */
    private final VerbsContext verbs;
    /** The queue pair's inline data limit (0: none); set when the queue pair is created. */
    int inlineLimit;
    /** The queue pair; replaced by reset. Guarded by {@link #lock}. */
    MemorySegment qp;
    /** The address of {@link #qp}, as the data-path downcalls take it. */
    private long qpAddress;
    int qpNum;
    private int generation;
    private final WorkRing sends;
    private final WorkRing recvs;
    /**
     * Whether the request (receive) EVD set aside room for every completion the queue can have
     * outstanding ({@link OfaEvd#reserveQueue}): its posts then reserve nothing each. Set at create.
     */
    private boolean sendsCovered;
    private boolean recvsCovered;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendWr;
    private final MemorySegment sendSges;
    private final MemorySegment recvSges;
    /** The lists {@link #sendSges} and {@link #recvSges} hold. */
    private final FilledSges sendFilled = new FilledSges();
    private final FilledSges recvFilled = new FilledSges();
    private final MemorySegment badWr;
    /**
     * The addresses of {@link #sendWr}, {@link #sendSges}, the receive work request and {@link #badWr},
     * as the data-path downcalls and the work request take them.
     */
    private final long sendWrArg;
    private final long sendSgesArg;
    private final long recvWrArg;
    private final long badWrArg;
    /**
     * The addresses of the one gather entry of inline data and of the buffer it names, where small
     * sends and RDMA Writes are gathered before they are posted inline.
     */
    private final long inlineSgeArg;
    private final long inlineDataArg;
    private final MemorySegment mwBind;
    private final MemorySegment qpAttr;
    private final MemorySegment connParam;
    private final MemorySegment privateData;

    private volatile EpState state = EpState.UNCONNECTED;
    /** The rdma_cm ID of the current connection, or NULL. */
    private MemorySegment cmId = MemorySegment.NULL;
    private long localPort;
    private InetSocketAddress remoteAddress;
    private long remotePort;
    private OfaEventLoop.Timer connectTimer;
    private OfaEventLoop.Timer timewaitTimer;
    /** The reserved service point holding the EP, or the request it was reserved for. */
    OfaRsp rsp;
    OfaCr pendingCr;
    /** A graceful disconnect waits for the request queue to drain. */
    private boolean gracefulWaiting;
    /** The terminal connection event, once the connection has ended; queued by {@link #maybeFinish}. */
    private EventNumber terminal;
    private byte[] terminalData = new byte[0];
    private boolean terminalQueued = true;
    private boolean cmDone;
    /** The EP's CQs are kept armed and polled (graceful disconnect, ending connection). */
    private boolean watching;
    /** Receives posted after the connection ended and before the terminal event: flushed just before it. */
    private final List<Long> lateReceives = new ArrayList<>();

    OfaEp(OfaIa ia, OfaPz pz, OfaEvd recvEvd, OfaEvd requestEvd, OfaEvd connectEvd, OfaSrq srq,
          EpAttributes attributes) {
        super(HandleType.EP);
        this.ia = ia;
        this.pz = pz;
        this.recvEvd = recvEvd;
        this.requestEvd = requestEvd;
        this.connectEvd = connectEvd;
        this.srq = srq;
        this.attributes = attributes;
        this.verbs = ia.device().context;
        sends = new WorkRing(WorkRing.SEND, Math.max(1, attributes.maxRequestDtos()));
        recvs = new WorkRing(WorkRing.RECV, Math.max(1, attributes.maxRecvDtos()));
        // The buffers every post writes need no liveness check: the arena is closed at dat_ep_free after
        // the EP was marked freed under its lock, and every post checks that under the lock first.
        sendWr = VerbsContext.dataPathView(arena.allocate(IbvSendWr.S.size(), 8));
        sendSges = VerbsContext.dataPathView(
                arena.allocate(IbvSge.S.size() * Math.max(1, attributes.maxRequestIov()), 8));
        MemorySegment recvWr = VerbsContext.dataPathView(arena.allocate(IbvRecvWr.S.size(), 8));
        recvSges = VerbsContext.dataPathView(
                arena.allocate(IbvSge.S.size() * Math.max(1, attributes.maxRecvIov()), 8));
        badWr = arena.allocate(8, 8);
        sendWrArg = sendWr.address();
        sendSgesArg = sendSges.address();
        recvWrArg = recvWr.address();
        badWrArg = badWr.address();
        MemorySegment inlineData = VerbsContext.dataPathView(arena.allocate(INLINE_MAX + INLINE_SLACK, 8));
        MemorySegment inlineSgeEntry = VerbsContext.dataPathView(arena.allocate(IbvSge.S.size(), 8));
        inlineSgeArg = inlineSgeEntry.address();
        inlineDataArg = inlineData.address();
        // A work request's chain never changes (a bind zeroes the request, so it stays 0), nor does a
        // receive's gather list: only its wr_id and entry count do; the inline entry always names
        // inlineData (its key is not used): only its length changes.
        IbvSendWr.NEXT.setLong(sendWr, 0);
        IbvRecvWr.NEXT.setLong(recvWr, 0);
        IbvRecvWr.SG_LIST.setPointer(recvWr, recvSges);
        IbvSge.ADDR.setLong(inlineSgeEntry, inlineData.address());
        IbvSge.LKEY.setInt(inlineSgeEntry, 0);
        mwBind = arena.allocate(IbvMwBind.S.size(), 8);
        qpAttr = arena.allocate(IbvQpAttr.S.size(), 8);
        connParam = arena.allocate(RdmaConnParam.S.size(), 8);
        privateData = arena.allocate(PrivateData.TRANSPORT_MAX + 8, 8);
    }

    /** Takes a new queue pair (at create and reset); it is moved to INIT so that receives can be posted. */
    void attachQp(MemorySegment newQp, int newQpNum) {
        qp = newQp;
        qpAddress = newQp.address();
        qpNum = newQpNum;
        generation++;
        sends.reset(generation);
        recvs.reset(generation);
        qpAttr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(qpAttr, Verbs.QPS_INIT);
        IbvQpAttr.PKEY_INDEX.setU16(qpAttr, 0);
        IbvQpAttr.PORT_NUM.setU8(qpAttr, ia.device().port);
        IbvQpAttr.QP_ACCESS_FLAGS.setInt(qpAttr,
                Verbs.ACCESS_LOCAL_WRITE | Verbs.ACCESS_REMOTE_WRITE | Verbs.ACCESS_REMOTE_READ);
        Verbs.get().modifyQp(qp, qpAttr, Verbs.QP_STATE | Verbs.QP_PKEY_INDEX | Verbs.QP_PORT
                | Verbs.QP_ACCESS_FLAGS);
    }

    /** At {@code dat_ep_create} (IA lock held): takes the CQ room of whole queues where the EVDs have it. */
    void coverQueues() {
        sendsCovered = requestEvd != null && requestEvd.reserveQueue(sends.capacity);
        recvsCovered = recvEvd != null && srq == null && recvEvd.reserveQueue(recvs.capacity);
    }

    /**
     * At {@code dat_ep_free} (IA lock held; the queue pair destroyed and its CQs polled since, so no
     * completion of it is left): gives back the CQ room its queues held.
     */
    void uncoverQueues() {
        lock.lock();
        try {
            if (requestEvd != null) {
                requestEvd.unreserve(sendsCovered ? sends.capacity : sends.outstanding());
            }
            if (recvEvd != null && srq == null) {
                recvEvd.unreserve(recvsCovered ? recvs.capacity : recvs.outstanding());
            }
            sendsCovered = false;
            recvsCovered = false;
        } finally {
            lock.unlock();
        }
    }

    EpState state() {
        return state;
    }

    /** Moves the EP between RESERVED, PASSIVE_CONNECTION_PENDING and UNCONNECTED (service points). */
    void setPassiveState(EpState s) {
        state = s;
    }

    @Override
    public EpParam query() {
        live();
        lock.lock();
        try {
            return new EpParam(ia, state, ia.address(), localPort, remoteAddress, remotePort, pz, recvEvd,
                    requestEvd, connectEvd, srq, attributes);
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_ep_modify}: the queue pair's EVDs (CQs) and sizes are fixed at creation on this provider. */
    @Override
    public void modify(EpAttributes attrs, EventDispatcher recv, EventDispatcher request, EventDispatcher connect) {
        live();
        if (state != EpState.UNCONNECTED) {
            throw state.invalid("dat_ep_modify");
        }
        if (attrs != null && !attrs.equals(attributes) || recv != null && recv != recvEvd
                || request != null && request != requestEvd || connect != null && connect != connectEvd) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_modify: a verbs queue pair cannot "
                    + "change its completion queues or queue sizes; create a new EP");
        }
    }

    // ---- connection establishment ----

    /**
     * {@code dat_ep_connect} over rdma_cm: rdma_resolve_addr, rdma_resolve_route and rdma_connect run
     * on the IA's event thread as their events arrive; the connection qualifier is the RDMA_PS_TCP
     * port ({@link PrivateData#port}).
     */
    @Override
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] data, Qos qos,
                        ConnectFlag flag) {
        live();
        InetSocketAddress target = target(remote);
        checkConnectArguments(timeoutMicros, qos, flag);
        byte[] pd = ia.wire.check(data, 5);
        lock.lock();
        try {
            live();
            if (state != EpState.UNCONNECTED) {
                throw state.invalid("dat_ep_connect");
            }
            startConnect(new InetSocketAddress(target.getAddress(), PrivateData.port(connQual)), connQual,
                    timeoutMicros, pd);
        } finally {
            lock.unlock();
        }
    }

    private static void checkConnectArguments(long timeoutMicros, Qos qos, ConnectFlag flag) {
        if (timeoutMicros <= 0) {
            throw DatException.invalidParameter(4, "the connect timeout must be positive or DAT_TIMEOUT_INFINITE, not "
                    + timeoutMicros);
        }
        if (qos == null || flag == null) {
            throw DatException.invalidParameter(qos == null ? 7 : 8, "null QoS or connect flag");
        }
        if (qos != Qos.BEST_EFFORT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "QoS " + qos
                    + " is not supported (RC over rdma_cm offers best effort only)");
        }
        if (flag != ConnectFlag.DEFAULT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "multipath connections are not supported");
        }
    }

    /** The IPv4 address a connect names, or INVALID_ADDRESS. */
    private static InetSocketAddress target(SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress isa) || isa.isUnresolved()
                || !(isa.getAddress() instanceof Inet4Address v4)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                    remote + " is not a resolved IPv4 address (rdma_cm RDMA_PS_TCP over RoCE/IPoIB)");
        }
        if (v4.isMulticastAddress() || v4.isAnyLocalAddress()
                || v4.equals(InetSocketAddress.createUnresolved("255.255.255.255", 0).getAddress())
                || (v4.getAddress()[0] == (byte) 255 && v4.getAddress()[3] == (byte) 255)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                    v4.getHostAddress() + " cannot be the address of an IA");
        }
        return isa;
    }

    private void startConnect(InetSocketAddress destination, long connQual, long timeoutMicros, byte[] data) {
        if (ia.cmChannel().equals(MemorySegment.NULL)) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "connections need rdma_cm: "
                    + RdmaCm.unavailableReason());
        }
        RdmaCm cm = RdmaCm.get();
        MemorySegment id;
        try {
            id = cm.createId(ia.cmChannel());
        } catch (VerbsException e) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.NO_SUBTYPE,
                    "dat_ep_connect (rdma_create_id): " + e.getMessage(), e);
        }
        int failure = 0;
        try {
            // Bound first, so that the local port qualifier is known when connect returns.
            cm.bindAddr(id, new InetSocketAddress(((InetSocketAddress) ia.address()).getAddress(), 0));
        } catch (VerbsException e) {
            quietDestroy(id);
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.NO_SUBTYPE,
                    "dat_ep_connect (rdma_bind_addr): " + e.getMessage(), e);
        }
        // Registered before rdma_resolve_addr: the event thread may see ADDR_RESOLVED before it returns.
        cmId = id;
        ia.registerEp(id, this);
        try {
            cm.resolveAddr(id, null, destination, (int) Math.min(RESOLVE_MILLIS, Math.max(1, timeoutMicros / 1000)));
        } catch (VerbsException e) {
            if (e.errno() != Errno.ENETUNREACH && e.errno() != Errno.EHOSTUNREACH
                    && e.errno() != Errno.EADDRNOTAVAIL && e.errno() != Errno.ENODEV) {
                destroyCmId();
                throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                        "dat_ep_connect to " + destination + ": " + e.getMessage(), e);
            }
            failure = e.errno();
        }
        localPort = RdmaCm.sourceAddress(id).getPort();
        remoteAddress = new InetSocketAddress(destination.getAddress(), 0);
        remotePort = connQual;
        privateDataWire = ia.wire.connect(data);
        state = EpState.ACTIVE_CONNECTION_PENDING;
        if (timeoutMicros != Dat.TIMEOUT_INFINITE) {
            MemorySegment mine = id;
            connectTimer = ia.loop().schedule(TimeUnit.MICROSECONDS.toNanos(timeoutMicros), () -> timedOut(mine));
        }
        if (failure != 0) {
            LOG.debug("connect to {} failed at once: {}", destination, failure);
            MemorySegment mine = id;
            ia.loop().schedule(0, () -> {
                lock.lock();
                try {
                    if (cmId.equals(mine) && state == EpState.ACTIVE_CONNECTION_PENDING) {
                        fail(EventNumber.CONNECTION_UNREACHABLE, new byte[0]);
                    }
                } finally {
                    lock.unlock();
                }
            });
        }
    }

    private byte[] privateDataWire = new byte[0];

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] data, Qos qos) {
        live();
        if (!(dup instanceof OfaEp d) || d.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "dat_ep_dup_connect: no live EP");
        }
        EpParam p = d.query();
        if (p.state() != EpState.CONNECTED) {
            throw p.state().invalid("dat_ep_dup_connect (of the EP to duplicate)");
        }
        connect(p.remoteAddress(), p.remotePortQual(), timeoutMicros, data, qos, ConnectFlag.DEFAULT);
    }

    /** {@code dat_ep_common_connect}: the port of the address is the rdma_cm port of the CSP. */
    @Override
    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] data) {
        live();
        InetSocketAddress target = target(remote);
        if (target.getPort() < 1) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                    "a common service point address needs a port");
        }
        connect(target, target.getPort(), timeoutMicros, data, Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
    }

    private void timedOut(MemorySegment id) {
        lock.lock();
        try {
            if (cmId.equals(id) && state == EpState.ACTIVE_CONNECTION_PENDING) {
                fail(EventNumber.CONNECTION_TIMED_OUT, new byte[0]);
            }
        } finally {
            lock.unlock();
        }
    }

    /** An rdma_cm event of this EP's ID (event thread). */
    void cmEvent(RdmaCm.CmEvent e) {
        if (e.event() == RdmaCm.EVENT_DISCONNECTED) {
            // A fatal completion that is already in a CQ says BROKEN, not DISCONNECTED: see it first.
            pollCqs();
        }
        lock.lock();
        try {
            if (isFreed() || !cmId.equals(e.id())) {
                return;
            }
            RdmaCm cm = RdmaCm.get();
            switch (e.event()) {
                case RdmaCm.EVENT_ADDR_RESOLVED -> {
                    if (state == EpState.ACTIVE_CONNECTION_PENDING) {
                        try {
                            cm.resolveRoute(cmId, RESOLVE_MILLIS);
                        } catch (VerbsException x) {
                            fail(EventNumber.CONNECTION_UNREACHABLE, new byte[0]);
                        }
                    }
                }
                case RdmaCm.EVENT_ROUTE_RESOLVED -> {
                    if (state == EpState.ACTIVE_CONNECTION_PENDING) {
                        try {
                            fillConnParam(privateDataWire, attributes.maxRdmaReadIn(), attributes.maxRdmaReadOut());
                            cm.connect(cmId, connParam);
                        } catch (VerbsException x) {
                            LOG.debug("rdma_connect failed", x);
                            fail(EventNumber.CONNECTION_NON_PEER_REJECTED, new byte[0]);
                        }
                    }
                }
                case RdmaCm.EVENT_CONNECT_RESPONSE -> {
                    if (state == EpState.ACTIVE_CONNECTION_PENDING) {
                        try {
                            toRtrRts(cmId, -1, -1);
                            cm.establish(cmId);
                        } catch (VerbsException x) {
                            LOG.debug("completing the connection failed", x);
                            fail(EventNumber.CONNECTION_NON_PEER_REJECTED, new byte[0]);
                            return;
                        }
                        established(ia.wire.received(e.privateData()));
                    }
                }
                case RdmaCm.EVENT_ESTABLISHED -> {
                    if (state == EpState.COMPLETION_PENDING || state == EpState.ACTIVE_CONNECTION_PENDING) {
                        established(new byte[0]);
                    }
                }
                case RdmaCm.EVENT_REJECTED -> {
                    if (state == EpState.ACTIVE_CONNECTION_PENDING) {
                        byte[] peer = ia.wire.peerRejected(e.status(), e.privateData());
                        fail(peer != null ? EventNumber.CONNECTION_PEER_REJECTED
                                : EventNumber.CONNECTION_NON_PEER_REJECTED, peer != null ? peer : new byte[0]);
                    } else if (state == EpState.COMPLETION_PENDING) {
                        fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
                    }
                }
                case RdmaCm.EVENT_ADDR_ERROR, RdmaCm.EVENT_ROUTE_ERROR, RdmaCm.EVENT_UNREACHABLE,
                     RdmaCm.EVENT_CONNECT_ERROR -> {
                    if (state == EpState.ACTIVE_CONNECTION_PENDING) {
                        fail(e.event() == RdmaCm.EVENT_CONNECT_ERROR ? EventNumber.CONNECTION_NON_PEER_REJECTED
                                : EventNumber.CONNECTION_UNREACHABLE, new byte[0]);
                    } else if (state == EpState.COMPLETION_PENDING) {
                        fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
                    } else if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
                        broken("rdma_cm " + e.name());
                    }
                }
                case RdmaCm.EVENT_DISCONNECTED -> disconnectedByCm();
                case RdmaCm.EVENT_TIMEWAIT_EXIT -> {
                    cmDone = true;
                    maybeFinish();
                }
                case RdmaCm.EVENT_DEVICE_REMOVAL -> {
                    if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
                        broken("device removal");
                    } else if (state == EpState.ACTIVE_CONNECTION_PENDING || state == EpState.COMPLETION_PENDING) {
                        fail(EventNumber.CONNECTION_BROKEN, new byte[0]);
                    }
                }
                default -> LOG.debug("EP: rdma_cm event {} ignored in {}", e.name(), state);
            }
        } finally {
            lock.unlock();
        }
    }

    private void established(byte[] data) {
        cancelConnectTimer();
        state = EpState.CONNECTED;
        if (connectEvd != null) {
            connectEvd.enqueue(new DatEvent.Connection(connectEvd, EventNumber.CONNECTION_ESTABLISHED, this, data));
        }
    }

    /**
     * {@code dat_cr_accept} with this EP (called by the CR): RTR and RTS with the request's path, then
     * rdma_accept with the private data. COMPLETION_PENDING until ESTABLISHED.
     */
    void accept(OfaCr cr, byte[] data) {
        lock.lock();
        try {
            live();
            boolean reserved = cr.reservedEp() == this;
            if (!(state == EpState.UNCONNECTED || reserved && state == EpState.PASSIVE_CONNECTION_PENDING)) {
                throw state.invalid("dat_cr_accept");
            }
            if (!cr.alive()) {
                if (reserved) {
                    state = EpState.UNCONNECTED;
                }
                throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                        "dat_cr_accept: the active side has withdrawn its connection request");
            }
            MemorySegment id = cr.takeId();
            cmId = id;
            ia.registerEp(id, this);
            remoteAddress = cr.remoteAddress();
            remotePort = cr.remotePort();
            localPort = cr.localPort();
            state = EpState.COMPLETION_PENDING;
            try {
                int resp = Math.min(attributes.maxRdmaReadIn(), Math.max(0, cr.initiatorDepth()));
                int init = Math.min(attributes.maxRdmaReadOut(), Math.max(0, cr.responderResources()));
                toRtrRts(id, resp, init);
                fillConnParam(ia.wire.connect(data), resp, init);
                RdmaCm.get().accept(id, connParam);
            } catch (VerbsException x) {
                LOG.debug("accept failed", x);
                fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
            }
        } finally {
            lock.unlock();
        }
    }

    private void fillConnParam(byte[] wire, int responderResources, int initiatorDepth) {
        connParam.fill((byte) 0);
        MemorySegment.copy(MemorySegment.ofArray(wire), 0, privateData, 0, wire.length);
        RdmaConnParam.PRIVATE_DATA.setPointer(connParam, privateData);
        RdmaConnParam.PRIVATE_DATA_LEN.setU8(connParam, wire.length);
        RdmaConnParam.RESPONDER_RESOURCES.setU8(connParam, Math.min(responderResources, ia.device().maxQpRdAtom));
        RdmaConnParam.INITIATOR_DEPTH.setU8(connParam, Math.min(initiatorDepth, ia.device().maxQpInitRdAtom));
        RdmaConnParam.RETRY_COUNT.setU8(connParam, 7);
        RdmaConnParam.RNR_RETRY_COUNT.setU8(connParam, RNR_RETRY_INFINITE);
        RdmaConnParam.SRQ.setU8(connParam, srq != null ? 1 : 0);
        RdmaConnParam.QP_NUM.setInt(connParam, qpNum);
    }

    /** RTR then RTS with the attributes rdma_cm computes for the ID (negative: keep rdma_cm's read depths). */
    private void toRtrRts(MemorySegment id, int responderResources, int initiatorDepth) {
        RdmaCm cm = RdmaCm.get();
        Verbs v = Verbs.get();
        qpAttr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(qpAttr, Verbs.QPS_RTR);
        int mask = cm.initQpAttr(id, qpAttr);
        if (responderResources >= 0) {
            IbvQpAttr.MAX_DEST_RD_ATOMIC.setU8(qpAttr, responderResources);
            mask |= Verbs.QP_MAX_DEST_RD_ATOMIC;
        }
        v.modifyQp(qp, qpAttr, mask);
        qpAttr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(qpAttr, Verbs.QPS_RTS);
        mask = cm.initQpAttr(id, qpAttr);
        if (initiatorDepth >= 0) {
            IbvQpAttr.MAX_RD_ATOMIC.setU8(qpAttr, initiatorDepth);
            mask |= Verbs.QP_MAX_QP_RD_ATOMIC;
        }
        v.modifyQp(qp, qpAttr, mask);
    }

    // ---- the end of a connection ----

    /**
     * {@code dat_ep_disconnect}. See the class comment; during establishment it aborts (the ID is
     * destroyed, which rejects or disconnects at the peer) and the pre-posted receives are flushed.
     */
    @Override
    public void disconnect(CloseFlag flag) {
        live();
        if (flag == null) {
            throw DatException.invalidParameter(2, "null disconnect flag");
        }
        lock.lock();
        try {
            live();
            switch (state) {
                case DISCONNECTED -> {
                }
                case ACTIVE_CONNECTION_PENDING, COMPLETION_PENDING -> fail(EventNumber.CONNECTION_DISCONNECTED,
                        new byte[0]);
                case CONNECTED -> {
                    if (flag == CloseFlag.GRACEFUL) {
                        state = EpState.DISCONNECT_PENDING;
                        gracefulWaiting = true;
                        watch(true);
                        if (sends.outstanding() == 0) {
                            sendDisconnectRequest();
                        }
                    } else {
                        closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
                    }
                }
                case DISCONNECT_PENDING -> {
                    if (flag == CloseFlag.ABRUPT) {
                        closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
                    }
                }
                default -> throw state.invalid("dat_ep_disconnect");
            }
        } finally {
            lock.unlock();
        }
    }

    /** Graceful: every request DTO has completed; the DREQ goes out and the DREP completes the disconnect. */
    private void sendDisconnectRequest() {
        gracefulWaiting = false;
        int r = RdmaCm.get().disconnect(cmId);
        if (r != 0) {
            LOG.debug("rdma_disconnect: errno {}", r);
            closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
        }
    }

    /** The peer's DREQ or DREP, or the CM's DREQ time-out. */
    private void disconnectedByCm() {
        if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
            closeConnection(EventNumber.CONNECTION_DISCONNECTED, false);
        } else if (state == EpState.COMPLETION_PENDING) {
            fail(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, new byte[0]);
        }
    }

    /**
     * Ends an established connection: the QP to the error state (flushing what is outstanding), the
     * DREQ (or DREP) to the peer, and the terminal event once everything has completed and, unless
     * broken, TIMEWAIT_EXIT has come.
     */
    private void closeConnection(EventNumber event, boolean isBroken) {
        state = EpState.DISCONNECTED;
        gracefulWaiting = false;
        toError();
        startTerminal(event, new byte[0], isBroken);
        if (!cmId.equals(MemorySegment.NULL)) {
            RdmaCm.get().disconnect(cmId);
        }
        if (!isBroken) {
            MemorySegment id = cmId;
            timewaitTimer = ia.loop().schedule(TIMEWAIT_LIMIT_NANOS, () -> {
                lock.lock();
                try {
                    if (cmId.equals(id) && !cmDone) {
                        LOG.debug("no TIMEWAIT_EXIT within {} s; completing the disconnect",
                                TimeUnit.NANOSECONDS.toSeconds(TIMEWAIT_LIMIT_NANOS));
                        cmDone = true;
                        maybeFinish();
                    }
                } finally {
                    lock.unlock();
                }
            });
        }
    }

    /** The transport failed under a connection (fatal completion, QP error event, port down, device removal). */
    void broken(String why) {
        lock.lock();
        try {
            if (isFreed()) {
                return;
            }
            if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
                LOG.debug("EP qp {}: connection broken ({})", qpNum, why);
                closeConnection(EventNumber.CONNECTION_BROKEN, true);
            } else if (state == EpState.DISCONNECTED && !terminalQueued
                    && terminal == EventNumber.CONNECTION_DISCONNECTED) {
                terminal = EventNumber.CONNECTION_BROKEN;
                cmDone = true;
                maybeFinish();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Establishment ended without a connection: the ID goes, the QP flushes, then the event. */
    private void fail(EventNumber event, byte[] data) {
        cancelConnectTimer();
        destroyCmId();
        state = EpState.DISCONNECTED;
        toError();
        startTerminal(event, data, true);
    }

    private void startTerminal(EventNumber event, byte[] data, boolean cmAlreadyDone) {
        terminal = event;
        terminalData = data;
        terminalQueued = false;
        cmDone = cmAlreadyDone;
        watch(true);
        maybeFinish();
    }

    /** Queues the terminal event once nothing is outstanding and rdma_cm is done. Under the lock. */
    private void maybeFinish() {
        if (cmDone && !terminalQueued && sends.outstanding() > 0) {
            retireUnsignalledTail();
        }
        if (terminalQueued || !cmDone || sends.outstanding() > 0 || recvs.outstanding() > 0) {
            return;
        }
        terminalQueued = true;
        watch(false);
        if (timewaitTimer != null) {
            timewaitTimer.cancel();
            timewaitTimer = null;
        }
        for (long cookie : lateReceives) {
            flushedReceive(cookie);
        }
        lateReceives.clear();
        if (connectEvd != null && !isFreed()) {
            connectEvd.enqueue(new DatEvent.Connection(connectEvd, terminal, this, terminalData));
        }
    }

    /**
     * DISC_02: the unsignalled sends at the end of the send queue (DAT_COMPLETION_SUPPRESS_FLAG, as
     * OFED's dtest posts its last messages before it disconnects) that completed before the queue
     * pair went to the error state have no work completion that could retire them (a flushed one
     * has its own, which retires them). Once the connection manager is done (TIMEWAIT_EXIT or its
     * time limit, long after the flushes of the error transition were polled), they are retired as
     * the successes they were, so the terminal event is not held back for ever. Under the lock.
     */
    private void retireUnsignalledTail() {
        long tail = sends.tail();
        long head = tail + sends.outstanding();
        for (long s = tail; s < head; s++) {
            if (sends.reportAt(s)) {
                return; // a request the consumer is told about is still to complete (its flush)
            }
        }
        if (requestEvd != null) {
            retire(requestEvd, sends, head - 1, true);
        } else {
            sends.retireThrough(head - 1);
        }
    }

    /** Keeps the EP's CQs armed and polled while its requests drain or its connection ends. */
    private void watch(boolean on) {
        if (on != watching) {
            watching = on;
            ia.watchClosing(this, on);
        }
    }

    private void toError() {
        qpAttr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(qpAttr, Verbs.QPS_ERR);
        try {
            Verbs.get().modifyQp(qp, qpAttr, Verbs.QP_STATE);
        } catch (VerbsException e) {
            LOG.warn("EP qp {}: cannot move the queue pair to the error state", qpNum, e);
        }
    }

    private void cancelConnectTimer() {
        if (connectTimer != null) {
            connectTimer.cancel();
            connectTimer = null;
        }
    }

    private void destroyCmId() {
        if (!cmId.equals(MemorySegment.NULL)) {
            MemorySegment id = cmId;
            cmId = MemorySegment.NULL;
            ia.unregisterEp(id);
            quietDestroy(id);
        }
    }

    private static void quietDestroy(MemorySegment id) {
        try {
            RdmaCm.get().destroyId(id);
        } catch (VerbsException e) {
            LOG.debug("rdma_destroy_id failed", e);
        }
    }

    /** Polls the EP's CQs (outside the EP's lock) so that completions already there are seen first. */
    void pollCqs() {
        if (requestEvd != null) {
            requestEvd.pollCq();
        }
        if (recvEvd != null && recvEvd != requestEvd) {
            recvEvd.pollCq();
        }
    }

    /** {@code dat_ep_reset}: a new queue pair replaces the one that carried the connection. */
    @Override
    public void reset() {
        live();
        lock.lock();
        try {
            live();
            if (state != EpState.DISCONNECTED) {
                throw state.invalid("dat_ep_reset");
            }
            if (!terminalQueued) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_DISCONNECTED,
                        "dat_ep_reset: the disconnect is still completing (its event has not been queued)");
            }
            destroyCmId();
            ia.replaceQp(this);
            localPort = 0;
            remoteAddress = null;
            remotePort = 0;
            terminal = null;
            state = EpState.UNCONNECTED;
        } finally {
            lock.unlock();
        }
    }

    /** Releases the EP's ID, timers and native memory (IA lock held; the QP is destroyed by the IA). */
    void release() {
        lock.lock();
        try {
            cancelConnectTimer();
            if (timewaitTimer != null) {
                timewaitTimer.cancel();
            }
            terminalQueued = true;
            watch(false);
            destroyCmId();
        } finally {
            lock.unlock();
        }
    }

    void freeNative() {
        arena.close();
    }

    // ---- data transfer ----

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        postRequest(Verbs.WR_SEND, DtoOperation.SEND, iov, cookie, null, flags, 0);
    }

    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        postRequest(invalidate ? Verbs.WR_SEND_WITH_INV : Verbs.WR_SEND, DtoOperation.SEND, iov, cookie, null,
                flags, rmrContext);
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        if (remote == null) {
            throw DatException.invalidParameter(4, "null RMR triplet");
        }
        postRequest(Verbs.WR_RDMA_READ, DtoOperation.RDMA_READ, iov, cookie, remote, flags, 0);
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
        postRequest(Verbs.WR_RDMA_WRITE, DtoOperation.RDMA_WRITE, iov, cookie, remote, flags, 0);
    }

    /**
     * The request posts: checks, the work request in the EP's native buffer, {@code ibv_post_send},
     * and the ring entry. Every check is made under the lock, after the one of the handle, so that a
     * freed EP fails INVALID_HANDLE whatever else is wrong and the handle is read once. The common
     * path is short enough for the JIT to compile it into the caller; failures are built in methods
     * of their own.
     */
    private void postRequest(int opcode, DtoOperation op, List<LmrTriplet> iov, long cookie, RmrTriplet remote,
                             Set<CompletionFlag> flags, int invalidate) {
        lock.lock();
        try {
            live();
            checkRequest(iov, flags, op);
            long total = prepareSges(sendFilled, sendSges, iov, iov.size());
            checkRequestLength(op, total, remote);
            int bits = CompletionBits.of(flags);
            boolean suppress = (bits & CompletionBits.SUPPRESS) != 0;
            boolean signal = !suppress || sends.unsignalledRun >= sends.capacity / 2;
            if (!sendsCovered && !requestEvd.reserve()) {
                throw cqFull("request", requestEvd);
            }
            writeSendWr(opcode, iov, total, sendFlags(bits, signal), invalidate, remote);
            int r = verbs.postSend(qpAddress, sendWrArg, badWrArg);
            if (r != 0) {
                throw postFailed("ibv_post_send", r, sendsCovered ? null : requestEvd);
            }
            sends.unsignalledRun = signal ? 0 : sends.unsignalledRun + 1;
            sends.add(cookie, op, total, dtoKind(sendFilled), !suppress, null);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes the work request of a post into {@link #sendWr}: the segments {@link #fillSges} wrote, or
     * their bytes inline where they fit and their memory is still there. Under the lock.
     */
    private void writeSendWr(int opcode, List<LmrTriplet> iov, long total, int sendFlags, int invalidate,
                             RmrTriplet remote) {
        int n = iov.size();
        int sges = n;
        int flags = sendFlags;
        if (total <= inlineLimit && total > 0 && opcode != Verbs.WR_RDMA_READ && !sendFilled.namedFreedLmr()
                && gatherInline(iov, n)) {
            flags |= Verbs.SEND_INLINE;
            sges = 1;
        }
        long wr = sendWrArg;
        DataPathMemory.putLong(wr + SEND_WR_ID, sends.nextWrId());
        DataPathMemory.putLong(wr + SEND_SG_LIST, sges == n ? sendSgesArg : inlineSge(total));
        DataPathMemory.putInt(wr + SEND_NUM_SGE, sges);
        DataPathMemory.putInt(wr + SEND_OPCODE, opcode);
        DataPathMemory.putInt(wr + SEND_FLAGS, flags);
        DataPathMemory.putInt(wr + SEND_INVALIDATE_RKEY, invalidate);
        if (remote != null) {
            DataPathMemory.putLong(wr + SEND_REMOTE_ADDR, remote.targetAddress());
            DataPathMemory.putInt(wr + SEND_RKEY, remote.rmrContext());
        }
    }

    /** The checks of a request post before its segments are looked at (under the lock). */
    private void checkRequest(List<LmrTriplet> iov, Set<CompletionFlag> flags, DtoOperation op) {
        if (iov == null || flags == null) {
            throw DatException.invalidParameter(2, "null segment list or completion flags");
        }
        if (iov.size() > attributes.maxRequestIov()) {
            throw DatException.invalidParameter(2, iov.size() + " segments exceed the EP's "
                    + attributes.maxRequestIov());
        }
        if (requestEvd == null) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE, "the EP has no request EVD");
        }
        if (state != EpState.CONNECTED) {
            throw notConnected(op);
        }
        if (sends.full()) {
            throw queueFull("request", sends);
        }
    }

    /** The {@code ibv_send_flags} of a request's completion flags ({@link CompletionBits}). */
    private static int sendFlags(int completionBits, boolean signal) {
        int sendFlags = signal ? Verbs.SEND_SIGNALED : 0;
        if ((completionBits & CompletionBits.SOLICITED_WAIT) != 0) {
            sendFlags |= Verbs.SEND_SOLICITED;
        }
        if ((completionBits & CompletionBits.BARRIER_FENCE) != 0) {
            sendFlags |= Verbs.SEND_FENCE;
        }
        return sendFlags;
    }

    private DatException notConnected(DtoOperation op) {
        return state.invalid(op == DtoOperation.SEND ? "dat_ep_post_send" : op == DtoOperation.RDMA_READ
                ? "dat_ep_post_rdma_read" : "dat_ep_post_rdma_write");
    }

    private static DatException queueFull(String which, WorkRing ring) {
        return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                "the " + which + " queue holds " + ring.capacity + " outstanding DTOs");
    }

    private void checkRequestLength(DtoOperation op, long total, RmrTriplet remote) {
        long max = op == DtoOperation.SEND ? attributes.maxMessageSize() : attributes.maxRdmaSize();
        if (total > max) {
            throw DatException.invalidParameter(2, total + " bytes exceed the EP's maximum of " + max);
        }
        if (remote != null && op == DtoOperation.RDMA_READ && remote.length() != total) {
            throw DatException.invalidParameter(4, "the RDMA Read reads " + remote.length() + " bytes into "
                    + total + " local bytes");
        }
    }

    /**
     * The scatter/gather entries of a post in {@code sges}, which {@code filled} describes: as they are
     * if the array already holds the list, checked, else filled by {@link #fillSges}. Returns the bytes
     * they add up to.
     */
    private long prepareSges(FilledSges filled, MemorySegment sges, List<LmrTriplet> iov, int n) {
        int frees = ia.lmrFrees();
        if (filled.holds(iov, frees)) {
            return filled.total();
        }
        filled.forget();
        return fillSges(filled, sges, iov, n, frees);
    }

    /**
     * Fills scatter/gather entries and records them in {@code filled}, checked when the IA had freed
     * {@code frees} LMRs. A freed LMR keeps its (now invalid) key so that the device reports the
     * protection error; an LMR of another IA or PZ, or a range outside the LMR, fails
     * PROTECTION_VIOLATION here.
     */
    private long fillSges(FilledSges filled, MemorySegment sges, List<LmrTriplet> iov, int n, int frees) {
        long total = 0;
        boolean freed = false;
        for (int i = 0; i < n; i++) {
            LmrTriplet t = iov.get(i);
            OfaLmr l = checkedLmr(t, i);
            long at = i * SGE_BYTES;
            long length = t.length();
            sges.set(ValueLayout.JAVA_LONG_UNALIGNED, at + SGE_ADDR, l == null ? 0L : l.segment().address() + t.offset());
            sges.set(ValueLayout.JAVA_INT_UNALIGNED, at + SGE_LENGTH, (int) length);
            sges.set(ValueLayout.JAVA_INT_UNALIGNED, at + SGE_LKEY, l == null ? 0 : l.lkey());
            if (l != null) {
                freed |= l.isFreed();
            }
            total += length;
        }
        filled.filled(iov, frees, total, freed);
        return total;
    }

    /** The LMR of segment {@code i}, or null for an empty segment; PROTECTION_VIOLATION if it is not usable. */
    private OfaLmr checkedLmr(LmrTriplet t, int i) {
        if (t == null) {
            throw DatException.invalidParameter(2, "null segment " + i);
        }
        if (t.length() == 0) {
            return null;
        }
        if (t.lmr() instanceof OfaLmr l && l.ia == ia && l.pz == pz && t.offset() + t.length() <= l.segment().byteSize()) {
            return l;
        }
        throw badSegment(t, i);
    }

    private DatException badSegment(LmrTriplet t, int i) {
        if (!(t.lmr() instanceof OfaLmr l) || l.ia != ia) {
            return new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i + " names no LMR of this IA");
        }
        if (l.pz != pz) {
            return new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i + " names an LMR of another PZ");
        }
        return new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i + " (" + t.offset() + "+"
                + t.length() + ") exceeds its LMR of " + l.segment().byteSize() + " bytes");
    }

    /**
     * Copies the segments (already checked by {@link #fillSges}) into the inline buffer, through
     * their MemorySegments so that memory released by the consumer is never read. False (and the
     * request goes out with its keys) if a segment's memory is no longer there or belongs to a
     * confined arena of another thread.
     */
    private boolean gatherInline(List<LmrTriplet> iov, int n) {
        long at = 0;
        for (int i = 0; i < n; i++) {
            LmrTriplet t = iov.get(i);
            long length = t.length();
            if (length == 0) {
                continue;
            }
            MemorySegment from = ((OfaLmr) t.lmr()).segment();
            try {
                copySmall(from, t.offset(), inlineDataArg + at, length);
            } catch (IllegalStateException | WrongThreadException unusable) {
                return false; // memory released, or confined to another thread
            }
            at += length;
        }
        return true;
    }

    /**
     * Copies at most {@link #INLINE_MAX} bytes of {@code from} to the provider's buffer at {@code to},
     * eight bytes at a time with the segment's checked loads, the last few too where the segment has
     * eight bytes there: the buffer then takes up to {@link #INLINE_SLACK} bytes more than
     * {@code length}, which the gather list does not name (a loop or a split for the last few bytes
     * costs more than they do). Cheaper for such sizes than {@code MemorySegment.copy}, whose checks
     * and copy routine are calls that the JIT keeps out of line. Throws as the segment's accessors
     * throw, before it writes anything of that load.
     */
    static void copySmall(MemorySegment from, long fromOffset, long to, long length) {
        long done = 0;
        for (; done + Long.BYTES <= length; done += Long.BYTES) {
            DataPathMemory.putLong(to + done, from.get(ValueLayout.JAVA_LONG_UNALIGNED, fromOffset + done));
        }
        if (done < length) {
            long at = fromOffset + done;
            if (at + Long.BYTES <= from.byteSize()) {
                DataPathMemory.putLong(to + done, from.get(ValueLayout.JAVA_LONG_UNALIGNED, at));
            } else {
                copyLastBytes(from, at, to + done, length - done);
            }
        }
    }

    /** The last {@code n} bytes of a segment, which has fewer than eight bytes from {@code at}. */
    private static void copyLastBytes(MemorySegment from, long at, long to, long n) {
        for (long k = 0; k < n; k++) {
            DataPathMemory.putByte(to + k, from.get(ValueLayout.JAVA_BYTE, at + k));
        }
    }

    /** The address of the one scatter/gather entry of inline data, with its length set. */
    private long inlineSge(long total) {
        DataPathMemory.putInt(inlineSgeArg + SGE_LENGTH, (int) total);
        return inlineSgeArg;
    }

    /** The ring entry kind of a DTO whose segments {@code filled} describes. */
    private static byte dtoKind(FilledSges filled) {
        return filled.namedFreedLmr() ? WorkRing.KIND_DTO_FREED_LMR : WorkRing.KIND_DTO;
    }

    private static DatException cqFull(String which, OfaEvd evd) {
        return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                "the " + which + " EVD's completion queue is full (" + evd.cqCapacity() + " entries)");
    }

    /** A failed post's error, after giving back the CQ room it reserved on {@code reservedOn} (if not null). */
    private static DatException postFailed(String what, int errno, OfaEvd reservedOn) {
        if (reservedOn != null) {
            reservedOn.unreserve();
        }
        if (errno == Errno.ENOMEM) {
            return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    what + ": the queue is full");
        }
        return new DatException(DatReturnType.INTERNAL_ERROR, DatReturnSubtype.NO_SUBTYPE,
                what + " failed: errno " + errno);
    }

    /** {@code dat_ep_post_recv}; every check under the lock, as for {@link #postRequest}. */
    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        lock.lock();
        try {
            live();
            checkRecv(iov, flags);
            int n = iov.size();
            long total = prepareSges(recvFilled, recvSges, iov, n);
            if (total > attributes.maxMessageSize()) {
                throw DatException.invalidParameter(2, total + " bytes exceed the EP's maximum message size");
            }
            if (state == EpState.DISCONNECTED) {
                recvAfterDisconnect(cookie);
                return;
            }
            if (recvs.full()) {
                throw queueFull("receive", recvs);
            }
            if (!recvsCovered && !recvEvd.reserve()) {
                throw cqFull("receive", recvEvd);
            }
            DataPathMemory.putLong(recvWrArg + RECV_WR_ID, recvs.nextWrId());
            DataPathMemory.putInt(recvWrArg + RECV_NUM_SGE, n);
            int r = verbs.postRecv(qpAddress, recvWrArg, badWrArg);
            if (r != 0) {
                throw postFailed("ibv_post_recv", r, recvsCovered ? null : recvEvd);
            }
            recvs.add(cookie, DtoOperation.RECEIVE, total, dtoKind(recvFilled), true, null);
        } finally {
            lock.unlock();
        }
    }

    /** The checks of {@code dat_ep_post_recv} before its segments are looked at (under the lock). */
    private void checkRecv(List<LmrTriplet> iov, Set<CompletionFlag> flags) {
        if (iov == null || flags == null) {
            throw DatException.invalidParameter(2, "null segment list or completion flags");
        }
        if (srq != null) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                    "the EP takes its receives from an SRQ (dat_srq_post_recv)");
        }
        if (iov.size() > attributes.maxRecvIov()) {
            throw DatException.invalidParameter(2, iov.size() + " segments exceed the EP's " + attributes.maxRecvIov());
        }
        if (recvEvd == null) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE, "the EP has no receive EVD");
        }
    }

    /** A receive posted after the connection ended: the queue pair is in the error state, it is flushed. */
    private void recvAfterDisconnect(long cookie) {
        // Flushed after those before it: at once if the terminal event is out, else just before it.
        if (terminalQueued) {
            flushedReceive(cookie);
        } else {
            lateReceives.add(cookie);
        }
    }

    private void flushedReceive(long cookie) {
        recvEvd.enqueue(new DatEvent.DtoCompletion(recvEvd, this, cookie, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE,
                0));
    }

    /**
     * {@code dat_rmr_bind} on this EP's send queue: a type 1 window through {@code ibv_bind_mw}, a
     * type 2 window through an IBV_WR_BIND_MW work request (or IBV_WR_LOCAL_INV to unbind). Returns
     * the new rmr_context (0 for an unbind).
     */
    int bind(OfaRmr rmr, OfaLmr lmr, long offset, long length, Set<MemPriv> privileges, long cookie,
             Set<CompletionFlag> flags) {
        lock.lock();
        try {
            live();
            if (state != EpState.CONNECTED) {
                throw state.invalid("dat_rmr_bind");
            }
            if (sends.full()) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the request queue is full");
            }
            if (requestEvd == null || !sendsCovered && !requestEvd.reserve()) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                        "no room in the request EVD's completion queue");
            }
            int access = 0;
            if (privileges != null && privileges.contains(MemPriv.REMOTE_READ)) {
                access |= Verbs.ACCESS_REMOTE_READ;
            }
            if (privileges != null && privileges.contains(MemPriv.REMOTE_WRITE)) {
                access |= Verbs.ACCESS_REMOTE_WRITE;
            }
            long wrId = sends.nextWrId();
            int r;
            int newContext;
            OfaLmr previous;
            synchronized (rmr) {
                previous = rmr.boundLmr;
            }
            if (rmr.scope == RmrScope.PZ && length == 0 && previous == null) {
                // Nothing is bound: the unbind completes at once.
                if (!sendsCovered) {
                    requestEvd.unreserve();
                }
                if (flags == null || !flags.contains(CompletionFlag.SUPPRESS)) {
                    requestEvd.enqueue(new DatEvent.RmrBindCompletion(requestEvd, rmr, cookie, DtoStatus.SUCCESS));
                }
                return 0;
            }
            if (rmr.scope == RmrScope.PZ) {
                mwBind.fill((byte) 0);
                IbvMwBind.WR_ID.setLong(mwBind, wrId);
                IbvMwBind.SEND_FLAGS.setInt(mwBind, Verbs.SEND_SIGNALED);
                MemorySegment info = IbvMwBind.BIND_INFO.slice(mwBind, IbvMwBindInfo.S.size());
                if (length > 0) {
                    IbvMwBindInfo.MR.setPointer(info, lmr.mr);
                    IbvMwBindInfo.ADDR.setLong(info, lmr.segment().address() + offset);
                    IbvMwBindInfo.LENGTH.setLong(info, length);
                    IbvMwBindInfo.MW_ACCESS_FLAGS.setInt(info, access);
                } else {
                    // A zero-length bind unbinds; rdma_rxe's provider needs an MR there (it reads its lkey).
                    IbvMwBindInfo.MR.setPointer(info, previous.mr);
                }
                r = ia.device().context.bindMw(qp, rmr.mw, mwBind);
                newContext = IbvMw.RKEY.getInt(rmr.mw);
            } else {
                MemorySegment wr = sendWr;
                wr.fill((byte) 0);
                IbvSendWr.WR_ID.setLong(wr, wrId);
                IbvSendWr.SEND_FLAGS.setInt(wr, Verbs.SEND_SIGNALED);
                if (length > 0) {
                    int old = rmr.windowKey;
                    newContext = (old & ~0xff) | ((old + 1) & 0xff);
                    IbvSendWr.OPCODE.setInt(wr, Verbs.WR_BIND_MW);
                    IbvSendWr.BIND_MW_MW.setPointer(wr, rmr.mw);
                    IbvSendWr.BIND_MW_RKEY.setInt(wr, newContext);
                    MemorySegment info = IbvSendWr.BIND_MW_INFO.slice(wr, IbvMwBindInfo.S.size());
                    IbvMwBindInfo.MR.setPointer(info, lmr.mr);
                    IbvMwBindInfo.ADDR.setLong(info, lmr.segment().address() + offset);
                    IbvMwBindInfo.LENGTH.setLong(info, length);
                    IbvMwBindInfo.MW_ACCESS_FLAGS.setInt(info, access);
                } else {
                    newContext = rmr.windowKey;
                    IbvSendWr.OPCODE.setInt(wr, Verbs.WR_LOCAL_INV);
                    IbvSendWr.INVALIDATE_RKEY.setInt(wr, rmr.windowKey);
                }
                r = ia.device().context.postSend(qp.address(), wr.address(), badWrArg);
            }
            if (r != 0) {
                throw postFailed("ibv_bind_mw", r, sendsCovered ? null : requestEvd);
            }
            rmr.windowKey = newContext;
            sends.unsignalledRun = 0;
            sends.add(cookie, DtoOperation.SEND, length, WorkRing.KIND_BIND,
                    flags == null || !flags.contains(CompletionFlag.SUPPRESS), rmr);
            return length > 0 ? newContext : 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A work completion of this EP's queue pair, {@code wc} (from a CQ poll; the CQ's poll lock is
     * held), for the request {@code wrId}. Retires the entries it completes and queues the event.
     * The usual case, a successful DTO on a connection that is not ending, is kept short (the JIT
     * compiles it into the poll) and reads the completion's other fields only where it needs them;
     * {@link #completedOther} handles errors, binds and the end of a connection.
     */
    void completed(OfaEvd evd, long wc, long wrId) {
        lock.lock();
        try {
            if (isFreed()) {
                return;
            }
            boolean send = (wrId & WorkRing.TAG_MASK) == WorkRing.SEND;
            WorkRing ring = send ? sends : recvs;
            long seq = ring.sequenceOf(wrId);
            if (seq < 0) {
                return;
            }
            long meta = ring.metaAt(seq);
            int status = WorkCompletion.status(wc);
            if (status != 0 || WorkRing.kindOf(meta) != WorkRing.KIND_DTO || !terminalQueued || gracefulWaiting) {
                completedOther(evd, ring, seq, status, wc);
                return;
            }
            long cookie = ring.cookieAt(seq);
            retire(evd, ring, seq, send);
            if (WorkRing.reportsSuccess(meta)) {
                evd.enqueue(new DatEvent.DtoCompletion(evd, this, cookie, DtoStatus.SUCCESS,
                        send ? WorkRing.lengthOf(meta) : WorkCompletion.byteLen(wc), WorkRing.opOf(meta),
                        WorkCompletion.invalidatedRkey(wc)));
            }
        } finally {
            lock.unlock();
        }
    }

    /** Retires the ring's entries through {@code seq}, and their CQ room unless the queue is covered. */
    private void retire(OfaEvd evd, WorkRing ring, long seq, boolean send) {
        int retired = (int) (seq - ring.tail() + 1);
        ring.retireThrough(seq);
        if (!(send ? sendsCovered : recvsCovered)) {
            evd.unreserve(retired);
        }
    }

    /** {@link #completed} for a failed request, a bind, or a connection that is ending. Under the lock. */
    private void completedOther(OfaEvd evd, WorkRing ring, long seq, int status, long wc) {
        long cookie = ring.cookieAt(seq);
        DtoOperation op = ring.opAt(seq);
        byte kind = ring.kindAt(seq);
        boolean report = ring.reportAt(seq);
        long length = ring.lengthAt(seq);
        Object subject = ring.subjectAt(seq);
        retire(evd, ring, seq, ring == sends);
        DtoStatus st = Completions.status(status, op == DtoOperation.RECEIVE, kind == WorkRing.KIND_DTO_FREED_LMR);
        if (kind == WorkRing.KIND_BIND) {
            OfaRmr rmr = (OfaRmr) subject;
            if (st != DtoStatus.SUCCESS) {
                ia.bindFailed(rmr);
            }
            if (st != DtoStatus.SUCCESS || report) {
                evd.enqueue(new DatEvent.RmrBindCompletion(evd, rmr, cookie,
                        st == DtoStatus.SUCCESS ? DtoStatus.SUCCESS
                                : st == DtoStatus.FLUSHED ? DtoStatus.FLUSHED : DtoStatus.RMR_OPERATION_FAILED));
            }
        } else if (st != DtoStatus.SUCCESS || report) {
            long transferred = st != DtoStatus.SUCCESS ? 0
                    : op == DtoOperation.RECEIVE ? WorkCompletion.byteLen(wc) : length;
            evd.enqueue(new DatEvent.DtoCompletion(evd, this, cookie, st, transferred, op,
                    WorkCompletion.invalidatedRkey(wc)));
        }
        if (st != DtoStatus.SUCCESS && st != DtoStatus.FLUSHED) {
            // Any other error moved the QP to the error state: the connection is broken.
            if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
                closeConnection(EventNumber.CONNECTION_BROKEN, true);
            } else if (state == EpState.DISCONNECTED && !terminalQueued
                    && terminal == EventNumber.CONNECTION_DISCONNECTED) {
                terminal = EventNumber.CONNECTION_BROKEN;
                cmDone = true;
            }
        }
        if (gracefulWaiting && sends.outstanding() == 0 && state == EpState.DISCONNECT_PENDING) {
            sendDisconnectRequest();
        }
        if (!terminalQueued) {
            maybeFinish();
        }
    }

    /** A receive of the SRQ consumed by this EP completed. */
    void srqCompleted(OfaEvd evd, long cookie, int status, long byteLen, int invalidatedRkey) {
        lock.lock();
        try {
            if (isFreed()) {
                return;
            }
            DtoStatus st = Completions.status(status);
            evd.enqueue(new DatEvent.DtoCompletion(evd, this, cookie, st, st == DtoStatus.SUCCESS ? byteLen : 0,
                    DtoOperation.RECEIVE, invalidatedRkey));
            if (st != DtoStatus.SUCCESS && st != DtoStatus.FLUSHED
                    && (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING)) {
                closeConnection(EventNumber.CONNECTION_BROKEN, true);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public EpStatus status() {
        live();
        lock.lock();
        try {
            return new EpStatus(state, recvs.outstanding() == 0, sends.outstanding() == 0);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void free() {
        ia.freeEp(this);
    }

    @Override
    public RecvQuery recvQuery() {
        live();
        if (srq == null) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_recv_query: the EP has no SRQ");
        }
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_ep_recv_query: verbs do not tell how an SRQ's buffers are used per queue pair");
    }

    @Override
    public void setWatermark(int softHighWatermark, int hardHighWatermark) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_ep_set_watermark: verbs SRQs have a low watermark (dat_srq_set_lw) only");
    }

    @Override
    public String toString() {
        return "EP qp " + qpNum + " " + state;
    }
}
