package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Cno;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.IaQuery;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.IaCounter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An IA over one libfabric domain: the {@code fi_info} of the provider and domain its
 * {@code ia_params} name, the fabric, the domain, one EQ for every connection event of the IA, and a
 * progress thread ({@link OfiProgress}). Creation of each object is the object's own; the IA keeps
 * the live ones to free them at an abrupt close.
 *
 * <p>Behaviours: OBJ_01, OBJ_10.
 */
final class OfiIa extends OfiObject implements InterfaceAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(OfiIa.class);
    static final int MAX_EVD_QLEN = 65536;
    static final int MAX_IOV = 4;

    final OfiProvider provider;
    private final String name;
    final OfiIaParams params;
    final long info;
    final long fabric;
    final long domain;
    final long eq;
    /** The EQ's wait file descriptor ({@code FI_WAIT_FD}), -1 without one. */
    final int eqWaitFd;
    final int mrMode;
    final InetSocketAddress address;
    /** The private data a consumer may send (the provider's CM data size less jdapl's header byte). */
    final int maxPrivateData;
    final long maxMsgSize;
    final int maxQueue;
    final int iovLimit;
    final OfiEvd asyncEvd;
    final OfiProgress progress;
    /** The RDM part of an IA over reliable-datagram endpoints (RDM_PROTOCOL.md), null over MSG endpoints. */
    final RdmIa rdm;
    volatile boolean closed;
    /** Set when the IA starts closing: a waiter its close releases fails ABORT. */
    volatile boolean closing;
    private final AtomicLong ids = new AtomicLong(1);
    /** The objects libfabric names in EQ entries (by the context given at creation). */
    final Map<Long, CmTarget> cmTargets = new ConcurrentHashMap<>();
    /** EPs by id, for completions (the id is in each operation's context). */
    final Map<Integer, OfiEp> eps = new ConcurrentHashMap<>();
    final Set<OfiObject> objects = ConcurrentHashMap.newKeySet();
    /** The EPs whose receive credits need the IA's progress (set with the progress thread). */
    final HeldRequests held;
    /** The IA's counters and its EPs' and EVDs' totals (DAT_COUNTERS). */
    final OfiCounters counters = new OfiCounters(this);

    /** Something an EQ entry can be for: a passive endpoint or an endpoint. */
    interface CmTarget {
        void cmEvent(int event, long entry, long length);

        void cmError(int err, byte[] data);
    }

    private OfiIa(OfiProvider provider, String name, OfiIaParams params, long info, int asyncQlen) {
        super(null, HandleType.IA);
        this.provider = provider;
        this.name = name;
        this.params = params;
        this.info = info;
        long fab = 0;
        long dom = 0;
        long q = 0;
        int qfd = -1;
        try {
            fab = Fi.get().fabric(FiCalls.word(info + INFO_FABRIC_ATTR), 0);
            dom = FiCalls.domain(fab, info, 0);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment attr = a.allocate(FI_EQ_ATTR.size(), 8);
                attr.set(ValueLayout.JAVA_LONG, EQ_ATTR_SIZE, 1024);
                long[] opened = FdWait.eqOpen(fab, attr);
                q = opened[0];
                qfd = (int) opened[1];
            }
        } catch (FiException e) {
            closeQuietly(q);
            closeQuietly(dom);
            closeQuietly(fab);
            Fi.get().freeinfo(info);
            throw FiErrors.toDat(e);
        }
        fabric = fab;
        domain = dom;
        eq = q;
        eqWaitFd = qfd;
        mrMode = FiInfo.mrMode(info);
        boolean rdmEp = RdmIa.isRdm(info);
        address = rdmEp ? RdmIa.iaAddress(info) : new InetSocketAddress(FiInfo.srcAddr(info).getAddress(), 0);
        maxPrivateData = rdmEp ? RdmMessage.MAX_PRIVATE_DATA : Math.max(0, cmDataSize() - MsgCredits.HEADER);
        long mms = FiInfo.attr(info, INFO_EP_ATTR, EP_MAX_MSG_SIZE);
        maxMsgSize = mms <= 0 || mms > (1L << 31) ? 1L << 31 : mms;
        maxQueue = (int) Math.min(FiInfo.attr(info, INFO_TX_ATTR, TX_SIZE), FiInfo.attr(info, INFO_RX_ATTR, RX_SIZE));
        iovLimit = (int) Math.min(MAX_IOV, Math.min(FiInfo.attr(info, INFO_TX_ATTR, TX_IOV_LIMIT),
                FiInfo.attr(info, INFO_RX_ATTR, RX_IOV_LIMIT)));
        asyncEvd = new OfiEvd(this, Math.max(asyncQlen, 8), null, EnumSet.of(EvdFlag.ASYNC), true);
        progress = new OfiProgress(this);
        held = new HeldRequests(progress);
        rdm = rdmEp ? new RdmIa(this) : null;
        if (rdm != null) {
            progress.readAlso(rdm);
        }
    }

    static OfiIa open(OfiProvider provider, String name, OfiIaParams params, int asyncQlen) {
        long list;
        try {
            list = FiInfo.query(params.provider(), params.domain());
        } catch (FiException e) {
            throw FiErrors.toDat(e);
        }
        if (list == 0 || FiInfo.pick(list, params.domain()) == 0) {
            if (list != 0) {
                Fi.get().freeinfo(list);
            }
            return start(provider, name, params, RdmIa.select(params), asyncQlen);
        }
        if (list == 0) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "libfabric offers no MSG endpoint of " + params);
        }
        long info;
        try {
            long pick = FiInfo.pick(list, params.domain());
            if (pick == 0) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                        "libfabric offers no MSG endpoint of " + params);
            }
            long next = FiCalls.word(pick + INFO_NEXT);
            FiCalls.MEM.set(ValueLayout.JAVA_LONG, pick + INFO_NEXT, 0L);
            info = Fi.get().dupinfo(pick);
            FiCalls.MEM.set(ValueLayout.JAVA_LONG, pick + INFO_NEXT, next);
        } finally {
            Fi.get().freeinfo(list);
        }
        return start(provider, name, params, info, asyncQlen);
    }

    private static OfiIa start(OfiProvider provider, String name, OfiIaParams params, long info, int asyncQlen) {
        OfiIa ia = new OfiIa(provider, name, params, info, asyncQlen);
        provider.counts.opened(HandleType.IA);
        ia.progress.start();
        LOG.debug("opened {} on libfabric {} {} at {}", name, FiInfo.providerName(info), FiInfo.domainName(info),
                ia.address);
        return ia;
    }

    private int cmDataSize() {
        long pep = 0;
        try (Arena a = Arena.ofConfined()) {
            pep = FiCalls.passiveEp(fabric, info, 0);
            MemorySegment v = a.allocate(8);
            MemorySegment len = a.allocate(8);
            len.set(ValueLayout.JAVA_LONG, 0, 8);
            int rc = FiCalls.getopt(pep, Fi.FI_OPT_ENDPOINT, Fi.FI_OPT_CM_DATA_SIZE, v.address(), len.address());
            return rc == 0 ? (int) Math.min(v.get(ValueLayout.JAVA_LONG, 0), 256) : 0;
        } catch (FiException e) {
            LOG.debug("no FI_OPT_CM_DATA_SIZE: {}", e.getMessage());
            return 0;
        } finally {
            closeQuietly(pep);
        }
    }

    static void closeQuietly(long fid) {
        if (fid != 0) {
            try {
                FiCalls.close(fid);
            } catch (FiException e) {
                LOG.debug("fi_close: {}", e.getMessage());
            }
        }
    }

    long nextId() {
        return ids.getAndIncrement();
    }

    void added(OfiObject o) {
        objects.add(o);
        provider.counts.opened(o.kind());
        counters.opened(o);
    }

    void removed(OfiObject o) {
        if (objects.remove(o)) {
            provider.counts.closed(o.kind());
            counters.closed(o);
        }
    }

    void checkIa() {
        if (closed) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_IA, "the IA is closed");
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IaQuery query() {
        checkIa();
        IaAttributes a = new IaAttributes(FiInfo.providerName(info) + " " + FiInfo.domainName(info), "libfabric",
                Fi.get().version() >>> 16, Fi.get().version() & 0xffff, 0, 0, address, 65536, maxQueue, 16, 16,
                4096, MAX_EVD_QLEN, iovLimit, 1 << 20, maxMsgSize, 1024, maxMsgSize, maxMsgSize, 1 << 20, 0, 0,
                maxPrivateData, true, Map.of("fabric", FiInfo.fabricName(info), "mr_mode", Integer.toString(mrMode),
                        "provider", FiInfo.providerName(info), "domain", FiInfo.domainName(info)));
        ProviderAttributes p = new ProviderAttributes(OfiProvider.NAME, 2, 0, Dat.VERSION_MAJOR, Dat.VERSION_MINOR, true,
                Set.of(Qos.BEST_EFFORT), EnumSet.of(CompletionFlag.SUPPRESS, CompletionFlag.UNSIGNALLED),
                true, maxPrivateData, 64, true, false, specificAttributes());
        return new IaQuery(asyncEvd, a, p);
    }

    private Map<String, String> specificAttributes() {
        Map<String, String> m = new java.util.HashMap<>(OfiExtensions.attributes(this));
        m.put("rmr", "registration of the bound range");
        m.put("srq", "fi_srx_context");
        if (rdm != null && rdm.rxm) {
            // each rxm endpoint's core CQ holds (128 + 128) x this many completions (Fi#keepJvmSignalHandlers)
            m.put("fi_universe_size", Fi.universeSize());
        }
        return Map.copyOf(m);
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<IaCounter> queryCounters(boolean reset) {
        checkIa();
        return counters.query(reset);
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<EpCounter> queryEpCounters(boolean reset) {
        checkIa();
        return counters.queryEps(reset);
    }

    /** Behaviours: EXT_09. */
    @Override
    public Counters<EvdCounter> queryEvdCounters(boolean reset) {
        checkIa();
        return counters.queryEvds(reset);
    }

    @Override
    public void close(CloseFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(1, "null close flag");
        }
        if (closed) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_IA, "the IA is already closed");
        }
        if (flag == CloseFlag.GRACEFUL && !objects.isEmpty()) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_IA_IN_USE,
                    objects.size() + " objects of the IA are live");
        }
        shutdown();
    }

    @Override
    public void close() {
        if (!closed) {
            shutdown();
        }
    }

    void abort(String reason) {
        if (closed) {
            return;
        }
        asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, this, 0, reason));
        for (OfiObject o : objects) {
            if (o instanceof OfiEp ep) {
                ep.broken();
            }
        }
        shutdown();
    }

    /** Frees every object (ABRUPT), stops the progress thread, closes the EQ, domain and fabric. */
    private synchronized void shutdown() {
        if (closed) {
            return;
        }
        closing = true;
        progress.stop();
        for (HandleType t : List.of(HandleType.CR, HandleType.PSP, HandleType.RSP, HandleType.EP, HandleType.SRQ, HandleType.RMR,
                HandleType.LMR, HandleType.EVD, HandleType.CNO, HandleType.PZ)) {
            if (t == HandleType.RMR && rdm != null) {
                rdm.closeHeld(); // the data endpoints closed after the EPs' peers, before their CQs
            }
            for (OfiObject o : objects) {
                if (o.kind() == t) {
                    try {
                        o.destroy();
                    } catch (RuntimeException e) {
                        LOG.warn("freeing {} at IA close", o.kind(), e);
                    }
                    removed(o);
                }
            }
        }
        if (rdm != null) {
            rdm.close();
        }
        closed = true;
        freed = true;
        asyncEvd.destroy();
        closeQuietly(eq);
        progress.closeWait();
        closeQuietly(domain);
        closeQuietly(fabric);
        Fi.get().freeinfo(info);
        provider.counts.closed(HandleType.IA);
        provider.closed(this);
    }

    @Override
    public ProtectionZone createPz() {
        checkIa();
        return new OfiPz(this);
    }

    @Override
    public EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags) {
        checkIa();
        if (minQlen < 1 || minQlen > MAX_EVD_QLEN) {
            throw DatException.invalidParameter(1, "EVD length " + minQlen + " is not within 1.." + MAX_EVD_QLEN);
        }
        if (flags == null || flags.isEmpty()) {
            throw DatException.invalidParameter(3, "an EVD needs event streams");
        }
        OfiCno c = cno == null ? null : OfiCno.of(this, cno);
        return new OfiEvd(this, minQlen, c, flags, false);
    }

    @Override
    public Cno createCno(Consumer<EventDispatcher> waitAgent) {
        checkIa();
        return new OfiCno(this, waitAgent);
    }

    @Override
    public Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, EpAttributes attributes) {
        checkIa();
        return new OfiEp(this, OfiPz.of(this, pz, 1), OfiEvd.of(this, recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV),
                OfiEvd.of(this, requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST),
                OfiEvd.of(this, connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN),
                attributes == null ? EpAttributes.defaults() : attributes);
    }

    @Override
    public Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        checkIa();
        if (srq == null) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_SRQ, "no SRQ");
        }
        return new OfiEp(this, OfiPz.of(this, pz, 1), OfiEvd.of(this, recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV),
                OfiEvd.of(this, requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST),
                OfiEvd.of(this, connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN), OfiSrq.of(this, srq),
                attributes == null ? EpAttributes.defaults() : attributes);
    }

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        checkIa();
        return OfiPsp.create(this, connQual, OfiEvd.crEvd(this, crEvd), flag);
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        checkIa();
        return OfiPsp.create(this, 0, OfiEvd.crEvd(this, crEvd), flag);
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        checkIa();
        return OfiPsp.createRsp(this, connQual, OfiEp.of(this, ep), OfiEvd.crEvd(this, crEvd));
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress address, EventDispatcher crEvd) {
        checkIa();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the ofi provider has no common service points");
    }

    @Override
    public LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
                                       VaType vaType) {
        checkIa();
        return new OfiLmr(this, OfiPz.of(this, pz, 1), region, privileges, vaType);
    }

    @Override
    public SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes attributes) {
        checkIa();
        return new OfiSrq(this, OfiPz.of(this, pz, 1), attributes);
    }

    @Override
    public void lmrSyncRdmaRead(List<LmrTriplet> segments) {
        checkIa();
    }

    @Override
    public void lmrSyncRdmaWrite(List<LmrTriplet> segments) {
        checkIa();
    }

    @Override
    void destroy() {
        shutdown();
    }

    /** The socket address a DAT address and connection qualifier name. */
    static InetSocketAddress target(SocketAddress remote, long connQual) {
        if (!(remote instanceof InetSocketAddress in) || in.isUnresolved()
                || !(in.getAddress() instanceof java.net.Inet4Address) || in.getAddress().isAnyLocalAddress()
                || in.getAddress().isMulticastAddress()) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                    "not an IPv4 unicast address: " + remote);
        }
        return new InetSocketAddress(in.getAddress(), port(connQual));
    }

    /**
     * The port of a connection qualifier: 1..65535 is the port itself, 0 lets the provider choose;
     * a larger one folds into 1024..32767, below Linux's ephemeral ports (32768..60999), so that a
     * listener does not collide with the local ports of other connections on the host (OFED's
     * {@code SID_TO_PORT} folds into 33534..65534, which is rdma_cm's own port space, not TCP's).
     */
    static int port(long connQual) {
        if (connQual >= 0 && connQual <= 65535) {
            return (int) connQual;
        }
        return (int) (Long.remainderUnsigned(connQual, 31744) + 1024);
    }
}
