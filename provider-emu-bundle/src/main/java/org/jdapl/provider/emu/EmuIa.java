package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jdapl.provider.emu.evd.Wakeups;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Cno;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.IaCounter;
import org.jdapl.dat.IaQuery;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An emulated Interface Adapter on a {@link Fabric}, a thin owner: the objects it creates and their
 * close order ({@link IaObjects}), the rmr_context table peers' RDMA is checked against
 * ({@link Contexts}), the service points connection requests arrive at ({@link Listeners}),
 * and up to two threads, started when first needed: a timer thread (connection timeouts, RNR
 * retries, deferred connection outcomes) and an agent thread (CNO wait agents and stages).
 * Closing the IA frees every object and stops both threads.
 *
 * <p>The file is over 500 lines for a reason: it is the whole {@code InterfaceAdapter} API (about
 * twenty-five calls), each of which checks the IA and its handles under the domain lock and hands the
 * work to the object's own class or to a part ({@link IaObjects}, {@link Listeners},
 * {@link EpArguments}, {@link EmuLimits}); one place for the IA's entry points.
 */
public final class EmuIa extends EmuObject implements InterfaceAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(EmuIa.class);

    private final EmuProvider provider;
    private final String name;
    private final Fabric fabric;
    private final LockDomain domain;
    private final SocketAddress address;
    private final IaAttributes attributes;
    private final EmuEvd asyncEvd;
    // guarded by the fabric lock
    private final IaObjects objects = new IaObjects();
    private final Listeners listeners = new Listeners(this);
    private final Contexts contexts = new Contexts();
    private long nextPortQual = 0x8000_0000L;
    private volatile boolean held;
    private final IaThreads threads = new IaThreads(this);

    EmuIa(EmuProvider provider, String name, IaParams params, Fabric fabric, int asyncEvdQlen) {
        super(HandleType.IA);
        this.provider = provider;
        this.name = name;
        this.fabric = fabric;
        this.domain = fabric.lockDomain();
        this.address = fabric.attach(this);
        String adapter = "emu-" + params.fabric() + (params.label().isEmpty() ? "" : ":" + params.label());
        this.attributes = EmuLimits.iaAttributes(adapter, address, params.fabric());
        ReentrantLock lock = domain.acquire();
        try {
            asyncEvd = new EmuEvd(this, asyncEvdQlen, null, Set.of(EvdFlag.ASYNC));
            asyncEvd.use();
            objects.add(asyncEvd);
        } finally {
            lock.unlock();
        }
    }

    @Override
    EmuIa ia() {
        return this;
    }

    EmuProvider provider() {
        return provider;
    }

    public Fabric fabric() {
        return fabric;
    }

    /** The lock domain of the IA: the IAs it is connected to on the loopback fabric share it. */
    public LockDomain domain() {
        return domain;
    }

    public SocketAddress address() {
        return address;
    }

    public boolean held() {
        return held;
    }

    /** Runs {@code action} under the IA's domain lock, then wakes the EVD waiters it deferred. */
    void locked(Runnable action) {
        ReentrantLock lock = domain.acquire();
        try {
            action.run();
        } finally {
            Wakeups.release(lock);
        }
    }

    <T> T locked(Supplier<T> action) {
        ReentrantLock lock = domain.acquire();
        try {
            return action.get();
        } finally {
            Wakeups.release(lock);
        }
    }

    // ---------------------------------------------------------------- handle checks

    /**
     * {@code handle} as an object of this IA.
     *
     * @throws DatException INVALID_HANDLE of {@code type} for null, foreign or freed handles
     */
    <T extends EmuObject> T own(DatHandle handle, Class<T> cls, HandleType type) {
        if (!cls.isInstance(handle) || cls.cast(handle).ia() != this) {
            throw type.invalid(handle == null ? "no " + type + " handle" : "not a " + type + " of this IA");
        }
        T t = cls.cast(handle);
        t.checkLive();
        return t;
    }

    EmuEvd ownEvd(EventDispatcher evd, DatReturnSubtype subtype) {
        if (!(evd instanceof EmuEvd e) || e.ia() != this || e.isFreed()) {
            throw DatException.invalidHandle(subtype, evd == null ? "no EVD" : "not a live EVD of this IA");
        }
        return e;
    }

    long nextPortQual() {
        return nextPortQual++;
    }

    // ---------------------------------------------------------------- events and threads

    /** Queues an event; an overflow of the EVD is reported on the asynchronous EVD (fabric lock held). */
    void post(EmuEvd evd, DatEvent event, boolean notify) {
        if (evd == asyncEvd) {
            objects.counts().inc(IaCounter.ASYNC_ERROR);
        }
        if (evd.enqueue(event, notify)) {
            overflowed(evd);
        }
    }

    /** Raises an async event naming {@code handle} (domain lock held). Behaviours: SRQ_01, EP_01. */
    void raiseAsync(EventNumber number, DatHandle handle, int reason, String detail) {
        post(asyncEvd, new DatEvent.AsyncError(asyncEvd, number, handle, reason, detail), true);
    }

    /**
     * Reports that {@code evd} went over its length (OBJ_04) on the asynchronous EVD. Called under the domain
     * lock or under a loopback send's {@link SendLock} only, so it takes none ({@link LockDomain}, lock order).
     */
    void overflowed(EmuEvd evd) {
        if (evd != asyncEvd) {
            objects.counts().inc(IaCounter.ASYNC_ERROR);
            asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_EVD_OVERFLOW, evd, 0,
                    "the EVD holds more events than its length " + evd.qlen()), true);
        } else {
            LOG.warn("the asynchronous EVD of IA {} overflowed", name);
        }
    }

    /** Runs {@code task} under the domain lock after {@code delayNanos}, unless the IA is closed first. */
    public ScheduledFuture<?> schedule(long delayNanos, Runnable task) {
        return threads.schedule(delayNanos, task);
    }

    /** Runs {@code task} under the domain lock on the IA's timer thread, after the caller returns. */
    public void later(Runnable task) {
        threads.schedule(0, task);
    }

    /** Runs consumer code (a CNO wait agent or stage) on the agent thread, never under a lock. */
    void runAgent(Runnable task) {
        threads.runAgent(task);
    }

    /** After the teardown (no lock held): the threads end, and the waiters it released leave their waits. */
    private void stopThreads() {
        fabric.stop();
        threads.stop();
        objects.awaitReleased(name);
    }

    /** The IA's service points, where connection requests arrive. */
    Listeners listeners() {
        return listeners;
    }

    /**
     * A UD exchange request from another IA arrives on {@code qual} (tcp fabric, domain lock held): a
     * {@link UdRequest} in IB_UD_CONNECTION_REQUEST on the consumer PSP's EVD.
     *
     * <p>Behaviours: EXT_08, EXT_10.
     *
     * @return false if no consumer PSP listens on {@code qual} (the active side reports IB_UD_CONNECTION_ERROR)
     */
    public boolean deliverUdRequest(long qual, EmuUdEp.Exchange active, byte[] privateData) {
        EmuEvd evd = listeners.udEvd(qual);
        if (evd == null) {
            return false;
        }
        UdRequest request = adopt(new UdRequest(this, active, privateData));
        post(evd, new DatEvent.UdConnection(evd, EventNumber.IB_UD_CONNECTION_REQUEST, null,
                ExtensionType.UD_CONNECT_REQUEST, request.activeHandle(), request, privateData), true);
        return true;
    }

    /** Connection requests arrive (see {@link Listeners#deliver}). */
    public boolean deliverRequest(Inbound inbound, long qual, boolean common, byte[] privateData, SocketAddress from,
                           long fromPort) {
        return listeners.deliver(inbound, qual, common, privateData, from, fromPort);
    }

    void forget(EmuObject object) {
        objects.remove(object);
    }

    // ---------------------------------------------------------------- contexts

    /** The IA's rmr_context and lmr_context table. */
    public Contexts contexts() {
        return contexts;
    }

    void revokeEpScopeRmrs(EmuEp ep) {
        objects.revokeEpScopeRmrs(ep);
    }

    // ---------------------------------------------------------------- fault hooks

    void setHeld(boolean hold) {
        locked(() -> {
            checkLive();
            held = hold;
            fabric.heldChanged();
            if (!hold) {
                for (EmuEp ep : objects.endpoints()) {
                    if (!ep.isFreed()) {
                        ep.kick();
                        ep.receiveAvailable();
                    }
                }
            }
        });
    }

    // ---------------------------------------------------------------- InterfaceAdapter

    @Override
    public String name() {
        return name;
    }

    @Override
    public IaQuery query() {
        checkLive();
        return new IaQuery(asyncEvd, attributes,
                EmuLimits.providerAttributes(ExtPosts.offered(this), ExtPosts.datagramsOffered(this)));
    }

    /** Behaviours: OBJ_01: GRACEFUL fails while objects live, ABRUPT frees them all. */
    @Override
    public void close(CloseFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(2, "no close flag");
        }
        locked(() -> {
            checkLive();
            if (flag == CloseFlag.GRACEFUL && objects.size() > 1) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_IA_IN_USE,
                        (objects.size() - 1) + " object(s) of the IA are still live");
            }
            teardown(IaObjects.CloseKind.CONSUMER, null);
        });
        stopThreads();
    }

    @Override
    public void close() {
        if (isFreed()) {
            return;
        }
        try {
            close(CloseFlag.ABRUPT);
        } catch (DatException e) {
            if (e.type() != DatReturnType.INVALID_HANDLE) {
                throw e;
            }
        }
    }

    /** Breaks the IA as a provider leaving does (see {@link EmuProvider#abort}). */
    void abort(String reason) {
        boolean closedNow = locked(() -> {
            if (isFreed()) {
                return false;
            }
            teardown(IaObjects.CloseKind.PROVIDER_LEAVING, reason);
            return true;
        });
        if (closedNow) {
            stopThreads();
        }
    }

    private void teardown(IaObjects.CloseKind kind, String reason) {
        if (kind == IaObjects.CloseKind.PROVIDER_LEAVING) {
            post(asyncEvd, new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, this, 0,
                    reason == null ? "the IA was aborted" : reason), true);
        }
        objects.destroyAll(kind, fabric);
        listeners.clear();
        contexts.clear();
        markFreed();
        fabric.detach(this);
        provider.closed(this);
    }

    /** Adds the IA's live objects to {@code counts} (fabric lock taken). */
    void countObjects(Map<HandleType, Integer> counts) {
        locked(() -> {
            if (isFreed()) {
                return;
            }
            counts.merge(HandleType.IA, 1, Integer::sum);
            objects.countInto(counts);
        });
    }

    @Override
    public ProtectionZone createPz() {
        return locked(() -> {
            checkLive();
            return add(new EmuPz(this));
        });
    }

    private <T extends EmuObject> T add(T object) {
        return objects.add(object);
    }

    /** Makes {@code object}, created by the provider, one of the IA's objects (domain lock held). */
    <T extends EmuObject> T adopt(T object) {
        return add(object);
    }

    @Override
    public EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags) {
        return locked(() -> {
            checkLive();
            EmuLimits.checkEvdQlen(minQlen, "EVD");
            if (flags == null || flags.isEmpty()) {
                throw DatException.invalidParameter(4, "an EVD needs at least one event stream");
            }
            EmuCno c = cno == null ? null : own(cno, EmuCno.class, HandleType.CNO);
            return add(new EmuEvd(this, minQlen, c, flags));
        });
    }

    @Override
    public Cno createCno(Consumer<EventDispatcher> waitAgent) {
        return locked(() -> {
            checkLive();
            return add(new EmuCno(this, waitAgent));
        });
    }

    @Override
    public Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, EpAttributes attributes) {
        return createEndpoint(pz, recvEvd, requestEvd, connectEvd, null, attributes);
    }

    /** Behaviours: EXT_10. */
    @Override
    public DatagramEndpoint createDatagramEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                             EventDispatcher connectEvd, EpAttributes attributes) {
        ExtPosts.requireDatagrams(this, "dat_ep_create (DAT_IB_SERVICE_TYPE_UD)");
        return (DatagramEndpoint) createEndpoint(pz, recvEvd, requestEvd, connectEvd, null,
                attributes == null ? EpAttributes.defaults() : attributes, true);
    }

    @Override
    public Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        if (srq == null) {
            throw HandleType.SRQ.invalid("no SRQ");
        }
        return createEndpoint(pz, recvEvd, requestEvd, connectEvd, srq, attributes);
    }

    private Endpoint createEndpoint(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        return createEndpoint(pz, recvEvd, requestEvd, connectEvd, srq, attributes, false);
    }

    private Endpoint createEndpoint(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes,
                                    boolean datagrams) {
        return locked(() -> {
            checkLive();
            EmuSrq s = srq == null ? null : own(srq, EmuSrq.class, HandleType.SRQ);
            EpArguments a = EpArguments.resolve(this, null, pz, recvEvd, requestEvd, connectEvd, s, attributes);
            return add(datagrams ? new EmuUdEp(this, a.pz(), a.recv(), a.request(), a.connect(), a.attributes())
                    : new EmuEp(this, a.pz(), a.recv(), a.request(), a.connect(), s, a.attributes(),
                    EpState.UNCONNECTED, false));
        });
    }

    /** The IA is live and {@code evd} a live EVD of it with the CR stream (service point creation). */
    private EmuEvd liveCrEvd(EventDispatcher evd) {
        checkLive();
        EmuEvd e = ownEvd(evd, DatReturnSubtype.INVALID_HANDLE_EVD_CR);
        if (!e.accepts(EvdFlag.CR)) {
            throw DatException.invalidParameter(3, "the EVD lacks the CR stream");
        }
        return e;
    }

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        return locked(() -> add(listeners.createPsp(connQual, liveCrEvd(crEvd), flag)));
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        return locked(() -> add(listeners.createPspAny(liveCrEvd(crEvd), flag)));
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        return locked(() -> {
            checkLive();
            EmuEp endpoint = own(ep, EmuEp.class, HandleType.EP);
            return add(listeners.createRsp(connQual, endpoint, liveCrEvd(crEvd)));
        });
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress cspAddress, EventDispatcher crEvd) {
        return locked(() -> add(listeners.createCsp(cspAddress, liveCrEvd(crEvd))));
    }

    @Override
    public LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
                                       VaType vaType) {
        return locked(() -> {
            checkLive();
            EmuPz p = own(pz, EmuPz.class, HandleType.PZ);
            EmuLmr lmr = EmuLmr.register(this, p, region, privileges, vaType);
            p.use();
            return add(lmr);
        });
    }

    /** {@code dat_rmr_create} and {@code dat_rmr_create_for_ep}. */
    RemoteMemoryRegion createRmr(EmuPz pz, RmrScope scope) {
        return locked(() -> {
            checkLive();
            pz.checkLive();
            pz.use();
            return add(new EmuRmr(this, pz, scope));
        });
    }

    @Override
    public SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes srqAttributes) {
        return locked(() -> {
            checkLive();
            EmuPz p = own(pz, EmuPz.class, HandleType.PZ);
            EmuLimits.checkSrqAttributes(srqAttributes);
            p.use();
            return add(new EmuSrq(this, p, srqAttributes));
        });
    }

    @Override
    public void lmrSyncRdmaRead(List<LmrTriplet> segments) {
        EmuLmr.sync(this, segments);
    }

    @Override
    public void lmrSyncRdmaWrite(List<LmrTriplet> segments) {
        EmuLmr.sync(this, segments);
    }

    /** The IA's counters (DAT_COUNTERS; domain lock held). */
    IaCounts counts() {
        return objects.counts();
    }

    /** Behaviours: EXT_09: the IA's counters, its EPs' and its EVDs' totals. */
    @Override
    public Counters<IaCounter> queryCounters(boolean reset) {
        return locked(() -> liveCounts().query(reset));
    }

    @Override
    public Counters<EpCounter> queryEpCounters(boolean reset) {
        return locked(() -> liveCounts().eps(objects.endpoints(), reset));
    }

    @Override
    public Counters<EvdCounter> queryEvdCounters(boolean reset) {
        return locked(() -> liveCounts().evds(objects.evds(), reset));
    }

    private IaCounts liveCounts() {
        checkLive();
        return objects.counts();
    }

    /** Whether {@code ia} has objects other than the asynchronous EVD (for tests). */
    Map<HandleType, Integer> objectCounts() {
        Map<HandleType, Integer> counts = new EnumMap<>(HandleType.class);
        countObjects(counts);
        return counts;
    }
}
