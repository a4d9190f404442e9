package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jdapl.dat.Cno;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;
import org.jdapl.dat.IaQuery;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Libc;
import org.jdapl.provider.ofa.verbs.Structs.IbvCompChannel;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An IA of the OFA provider on one device port: the owner of the device context, a completion
 * channel shared by the CQs of its EVDs, an rdma_cm event channel for its connections, one event
 * thread ({@link OfaEventLoop}) whose handlers are the IA's {@link OfaRouter}, and the registry of its
 * live objects ({@link IaObjects}). Each object creates and destroys its own verbs resources
 * ({@link OfaPz}, {@link OfaEvd}, {@link OfaCno}, {@link OfaLmr}, {@link OfaRmr}, {@link OfaSrq},
 * {@link OfaEp}, {@link OfaPsp}, {@link OfaRsp}, {@link OfaCsp}) under the IA's lock; closing
 * destroys what is left in dependency order, then the channels and the device.
 *
 * <p>Behaviours: OBJ_01.
 */
final class OfaIa extends OfaHandle implements InterfaceAdapter, OfaRouter.Owner {
    private static final Logger LOG = LoggerFactory.getLogger(OfaIa.class);
    private final OfaProvider provider;
    private final String name;
    /** The private data convention on the wire: OFED's for ofa-v2-* names, jdapl's otherwise. */
    final PrivateData wire;
    private final OfaDevice device;
    private final ObjectCounts counts;
    private final ReentrantLock lock = new ReentrantLock();
    private final MemorySegment compChannel;
    private final MemorySegment cmChannel;
    private final OfaRouter router;
    private final OfaEventLoop loop;
    private final OfaEvd asyncEvd;
    private final InetSocketAddress address;
    private final IaObjects objects;
    /**
     * How many LMRs have been freed (written under the lock): a post whose segments were checked
     * before a free checks them again ({@link FilledSges}).
     */
    private volatile int lmrFrees;
    /** A CQ for EPs created without a receive or request EVD (created on first need). */
    private MemorySegment nullCq = MemorySegment.NULL;

    OfaIa(OfaProvider provider, String name, OfaDevice device, int asyncEvdMinQlen, ObjectCounts counts) {
        super(HandleType.IA);
        this.provider = provider;
        this.name = name;
        this.wire = PrivateData.of(name);
        this.device = device;
        this.counts = counts;
        this.objects = new IaObjects(counts);
        this.address = new InetSocketAddress(device.address != null ? device.address
                : java.net.InetAddress.getLoopbackAddress(), 0);
        Verbs v = Verbs.get();
        MemorySegment ch = MemorySegment.NULL;
        MemorySegment cm = MemorySegment.NULL;
        try {
            ch = v.createCompChannel(device.context.pointer()).reinterpret(IbvCompChannel.S.size());
            Libc.setNonBlocking(IbvCompChannel.FD.getInt(ch));
            Libc.setNonBlocking(device.context.asyncFd());
            if (RdmaCm.unavailableReason() == null) {
                cm = RdmaCm.get().createEventChannel();
                Libc.setNonBlocking(RdmaCm.channelFd(cm));
            }
        } catch (VerbsException e) {
            if (!ch.equals(MemorySegment.NULL)) {
                v.destroyCompChannel(ch);
            }
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_DEVICE, "cannot set up IA " + name, e);
        }
        compChannel = ch;
        cmChannel = cm;
        router = new OfaRouter(this, name, device, ch, cm, wire);
        asyncEvd = new OfaEvd(this, asyncEvdMinQlen, null, EnumSet.of(EvdFlag.ASYNC), true);
        loop = new OfaEventLoop(name, IbvCompChannel.FD.getInt(ch), device.context.asyncFd(),
                cm.equals(MemorySegment.NULL) ? -1 : RdmaCm.channelFd(cm), router);
        loop.start();
        router.start();
        counts.opened(HandleType.IA);
        counts.opened(HandleType.EVD);
    }

    OfaDevice device() {
        return device;
    }

    SocketAddress address() {
        return address;
    }

    InetSocketAddress inetAddress() {
        return address;
    }

    int maxEvdQlen() {
        return device.maxCqe;
    }

    OfaEventLoop loop() {
        return loop;
    }

    OfaRouter router() {
        return router;
    }

    IaObjects objects() {
        return objects;
    }

    @Override
    public OfaEvd asyncEvd() {
        return asyncEvd;
    }

    MemorySegment cmChannel() {
        return cmChannel;
    }

    MemorySegment compChannel() {
        return compChannel;
    }

    ReentrantLock lock() {
        return lock;
    }

    /** Runs {@code action} under the IA's lock, after checking that the IA is open. */
    <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            live();
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The consumer's free of {@code o} under the IA's lock: INVALID_HANDLE if it is freed already (also
     * by the IA's close), else the {@code checks} (which throw to refuse), then its destroy.
     */
    <T extends OfaHandle & IaObjects.Owned> void free(T o, Runnable checks) {
        lock.lock();
        try {
            if (o.isFreed()) {
                throw o.alreadyFreed();
            }
            checks.run();
            o.destroy();
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_*_free} of an object that may always be freed: fails only a second free. */
    <T extends OfaHandle & IaObjects.Owned> void free(T o) {
        free(o, () -> { });
    }

    /** Runs {@code action} under the IA's lock (also after close: frees of objects the close freed fail there). */
    void lockedFree(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IaQuery query() {
        live();
        return new IaQuery(asyncEvd, IaAttributesOf.ia(this), IaAttributesOf.provider(this));
    }

    /** {@code dat_query_counters} on the IA ({@link IaCounts}). Behaviours: EXT_09. */
    @Override
    public Counters<IaCounter> queryCounters(boolean reset) {
        live();
        return objects.queryCounters(reset);
    }

    @Override
    public Counters<EpCounter> queryEpCounters(boolean reset) {
        live();
        return objects.queryEpCounters(reset);
    }

    @Override
    public Counters<EvdCounter> queryEvdCounters(boolean reset) {
        live();
        return objects.queryEvdCounters(asyncEvd, reset);
    }

    // ---- close ----

    /** {@code dat_ia_close}: GRACEFUL fails while objects live, ABRUPT frees them all. Behaviours: OBJ_01. */
    @Override
    public void close(CloseFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(2, "null close flag");
        }
        lock.lock();
        try {
            live();
            int live = objects.inUse();
            if (flag == CloseFlag.GRACEFUL && live > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_IA_IN_USE,
                        "IA " + name + " has " + live + " live object(s)");
            }
            markFreed();
            objects.destroyAll();
        } finally {
            lock.unlock();
        }
        teardown();
    }

    @Override
    public void close() {
        if (!isFreed()) {
            try {
                close(CloseFlag.ABRUPT);
            } catch (DatException e) {
                if (e.type() != DatReturnType.INVALID_HANDLE) {
                    throw e;
                }
            }
        }
    }

    /** Breaks the IA: IA_CATASTROPHIC on the async EVD, then an abrupt close. */
    void abort(String reason) {
        if (isFreed()) {
            return;
        }
        asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, this, 0, reason));
        close();
    }

    /** Stops the event thread and releases the channels and the device (after the lock). */
    private void teardown() {
        loop.stop();
        router.stop();
        Verbs v = Verbs.get();
        lock.lock();
        try {
            if (!nullCq.equals(MemorySegment.NULL)) {
                NativeErrors.quietly("ibv_destroy_cq", () -> v.destroyCq(nullCq));
                nullCq = MemorySegment.NULL;
            }
        } finally {
            lock.unlock();
        }
        NativeErrors.quietly("ibv_destroy_comp_channel", () -> v.destroyCompChannel(compChannel));
        if (!cmChannel.equals(MemorySegment.NULL)) {
            NativeErrors.quietly("rdma_destroy_event_channel", () -> RdmaCm.get().destroyEventChannel(cmChannel));
        }
        asyncEvd.closed();
        counts.closed(HandleType.EVD);
        device.close();
        counts.closed(HandleType.IA);
        provider.closed(this);
    }

    // ---- object creation: each kind creates itself ----

    @Override
    public ProtectionZone createPz() {
        return locked(() -> OfaPz.create(this));
    }

    @Override
    public EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags) {
        return OfaEvd.create(this, minQlen, cno, flags);
    }

    @Override
    public Cno createCno(Consumer<EventDispatcher> waitAgent) {
        return locked(() -> OfaCno.create(this, waitAgent));
    }

    @Override
    public LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
                                       VaType vaType) {
        return OfaLmr.create(this, pz, region, privileges, vaType);
    }

    @Override
    public Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, EpAttributes attributes) {
        return ConsumerEps.create(this, pz, recvEvd, requestEvd, connectEvd, null, attributes);
    }

    /** {@code dat_ep_create} with DAT_IB_SERVICE_TYPE_UD: {@link OfaUdEp}. */
    @Override
    public DatagramEndpoint createDatagramEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                             EventDispatcher connectEvd, EpAttributes attributes) {
        return OfaUdEp.create(this, pz, recvEvd, requestEvd, connectEvd, attributes);
    }

    @Override
    public Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        if (!(srq instanceof OfaSrq q) || q.ia != this || q.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_SRQ, "not a live SRQ of IA " + name);
        }
        return ConsumerEps.create(this, pz, recvEvd, requestEvd, connectEvd, q, attributes);
    }

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        return OfaPsp.create(this, connQual, crEvd, flag);
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        return OfaPsp.create(this, -1, crEvd, flag);
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        return OfaRsp.create(this, connQual, ep, crEvd);
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress cspAddress, EventDispatcher crEvd) {
        return OfaCsp.create(this, cspAddress, crEvd);
    }

    @Override
    public SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes attributes) {
        return OfaSrq.create(this, pz, attributes);
    }

    /** {@code dat_cr_handoff}: queues the request again at the PSP of {@code connQual}. */
    boolean handoff(OfaCr cr, long connQual) {
        lock.lock();
        try {
            for (OfaPsp p : objects.of(HandleType.PSP, OfaPsp.class)) {
                if (p.connQual == connQual) {
                    p.requestAgain(cr.handedOff());
                    return true;
                }
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    // ---- what the objects check of each other ----

    /** How many LMRs of the IA have been freed so far. */
    int lmrFrees() {
        return lmrFrees;
    }

    /** An LMR was freed (IA lock held). */
    void lmrFreed() {
        lmrFrees = lmrFrees + 1;
    }

    /** A CQ for EPs created without a receive or request EVD (IA lock held). */
    MemorySegment nullCq() {
        if (nullCq.equals(MemorySegment.NULL)) {
            nullCq = Verbs.get().createCq(device.context.pointer(), 1, MemorySegment.NULL);
        }
        return nullCq;
    }

    OfaPz ownPz(ProtectionZone pz, int arg) {
        if (!(pz instanceof OfaPz p) || p.ia != this) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_PZ,
                    "argument " + arg + " is not a PZ of IA " + name);
        }
        p.live();
        return p;
    }

    OfaCno ownCno(Cno cno, int arg) {
        if (cno == null) {
            return null;
        }
        if (!(cno instanceof OfaCno c) || !objects.contains(HandleType.CNO, c)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_CNO,
                    "argument " + arg + " is not a live CNO of IA " + name);
        }
        return c;
    }

    OfaEvd ownEvd(EventDispatcher evd, DatReturnSubtype subtype, EvdFlag stream) {
        if (evd == null) {
            return null;
        }
        if (!(evd instanceof OfaEvd e) || e.ia() != this || e.isFreed()) {
            throw DatException.invalidHandle(subtype, "not a live EVD of IA " + name);
        }
        if (stream != null && !e.flags().contains(stream)) {
            throw DatException.invalidParameter(0, "the EVD lacks the " + stream + " stream");
        }
        return e;
    }

    /** The EVD of a service point: a live EVD of this IA with the CR stream. */
    OfaEvd crEvd(EventDispatcher crEvd, int arg) {
        OfaEvd evd = ownEvd(crEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CR, null);
        if (evd == null || !evd.flags().contains(EvdFlag.CR)) {
            throw DatException.invalidParameter(arg, "the service point's EVD must have the CR stream");
        }
        return evd;
    }

    OfaEp ownEp(Endpoint ep) {
        if (!(ep instanceof OfaEp x) || x.ia != this || x.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "not a live EP of IA " + name);
        }
        return x;
    }

    /** EVD overflow: ASYNC_ERROR_EVD_OVERFLOW on the async EVD. Behaviours: OBJ_04. */
    void reportOverflow(OfaEvd evd) {
        if (evd != asyncEvd) {
            asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_EVD_OVERFLOW, evd, 0,
                    "EVD queue overflow"));
        } else {
            LOG.error("IA {}: asynchronous EVD overflow", name);
        }
    }

    @Override
    public void lmrSyncRdmaRead(List<LmrTriplet> segments) {
        OfaLmr.checkTriplets(this, segments);
    }

    @Override
    public void lmrSyncRdmaWrite(List<LmrTriplet> segments) {
        OfaLmr.checkTriplets(this, segments);
    }

    @Override
    public String toString() {
        return "IA " + name + " on " + device.name + " port " + device.port;
    }
}
