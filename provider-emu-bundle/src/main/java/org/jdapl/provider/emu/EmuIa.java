package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Cno;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
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
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.ServicePoint;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An emulated Interface Adapter on a {@link Fabric}. It owns every object it creates, the
 * rmr_context table peers' RDMA is checked against, the listeners connection requests arrive at,
 * and up to two threads, started when first needed: a timer thread (connection timeouts, RNR
 * retries, deferred connection outcomes) and an agent thread (CNO wait agents and stages).
 * Closing the IA frees every object and stops both threads.
 */
final class EmuIa extends EmuObject implements InterfaceAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(EmuIa.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Thread PROBE = Thread.ofPlatform().unstarted(() -> { });

    private final EmuProvider provider;
    private final String name;
    private final Fabric fabric;
    private final LockDomain domain;
    private final SocketAddress address;
    private final IaAttributes attributes;
    private final EmuEvd asyncEvd;
    // guarded by the fabric lock
    private final Set<EmuObject> objects = new LinkedHashSet<>();
    private final Map<Long, EmuObject> listeners = new HashMap<>();
    private final Map<Integer, EmuCsp> commonListeners = new HashMap<>();
    private final Map<Integer, RemoteTarget> contexts = new HashMap<>();
    private final Set<Integer> lmrContexts = new HashSet<>();
    private long nextPortQual = 0x8000_0000L;
    private long nextAnyQual = 0x4000_0000L;
    private volatile boolean held;
    // guarded by threadLock
    private final Object threadLock = new Object();
    private ScheduledThreadPoolExecutor timer;
    private ExecutorService agents;
    private volatile Thread timerThread;
    private volatile Thread agentThread;

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

    Fabric fabric() {
        return fabric;
    }

    /** The lock domain of the IA: the IAs it is connected to on the loopback fabric share it. */
    LockDomain domain() {
        return domain;
    }

    SocketAddress address() {
        return address;
    }

    boolean held() {
        return held;
    }

    /** Runs {@code action} under the IA's domain lock, then wakes the EVD waiters it deferred. */
    void locked(Runnable action) {
        ReentrantLock lock = domain.acquire();
        try {
            action.run();
        } finally {
            lock.unlock();
            if (!lock.isHeldByCurrentThread()) {
                Wakeups.run();
            }
        }
    }

    <T> T locked(Supplier<T> action) {
        ReentrantLock lock = domain.acquire();
        try {
            return action.get();
        } finally {
            lock.unlock();
            if (!lock.isHeldByCurrentThread()) {
                Wakeups.run();
            }
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

    static void checkStreams(EmuEvd recv, EmuEvd request, EmuEvd connect) {
        if (recv != null && !recv.accepts(EvdFlag.DTO)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EVD_RECV, "the receive EVD lacks the DTO stream");
        }
        if (request != null && !request.accepts(EvdFlag.DTO) && !request.accepts(EvdFlag.RMR_BIND)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST,
                    "the request EVD lacks the DTO stream");
        }
        if (connect != null && !connect.accepts(EvdFlag.CONNECTION)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EVD_CONN,
                    "the connect EVD lacks the CONNECTION stream");
        }
    }

    EpAttributes checkEpAttributes(EpAttributes a, boolean withSrq) {
        if (a.maxMessageSize() > EmuLimits.MAX_MESSAGE_SIZE || a.maxRdmaSize() > EmuLimits.MAX_RDMA_SIZE
                || a.maxRecvDtos() > EmuLimits.MAX_DTO_PER_EP || a.maxRequestDtos() > EmuLimits.MAX_DTO_PER_EP
                || a.maxRecvIov() > EmuLimits.MAX_IOV || a.maxRequestIov() > EmuLimits.MAX_IOV
                || a.maxRdmaReadIn() > EmuLimits.MAX_RDMA_READ_PER_EP
                || a.maxRdmaReadOut() > EmuLimits.MAX_RDMA_READ_PER_EP) {
            throw DatException.invalidParameter(6, "EP attributes over the IA's limits: " + a);
        }
        return a;
    }

    byte[] checkPrivateData(byte[] data, int arg) {
        if (data == null) {
            return new byte[0];
        }
        if (data.length > EmuLimits.MAX_PRIVATE_DATA) {
            throw DatException.invalidParameter(arg, data.length + " bytes of private data, over the maximum of "
                    + EmuLimits.MAX_PRIVATE_DATA);
        }
        return data.clone();
    }

    long nextPortQual() {
        return nextPortQual++;
    }

    // ---------------------------------------------------------------- events and threads

    /** Queues an event; an overflow of the EVD is reported on the asynchronous EVD (fabric lock held). */
    void post(EmuEvd evd, DatEvent event, boolean notify) {
        if (evd.enqueue(event, notify)) {
            if (evd != asyncEvd) {
                asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_EVD_OVERFLOW, evd, 0,
                        "the EVD holds more events than its length " + evd.query().qlen()), true);
            } else {
                LOG.warn("the asynchronous EVD of IA {} overflowed", name);
            }
        }
    }

    /** Runs {@code task} under the fabric lock after {@code delayNanos}, unless the IA is closed first. */
    ScheduledFuture<?> schedule(long delayNanos, Runnable task) {
        synchronized (threadLock) {
            if (isFreed()) {
                return null;
            }
            if (timer == null) {
                timer = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = Thread.ofPlatform().daemon().name("jdapl-emu-" + name + "-timer").unstarted(r);
                    timerThread = t;
                    return t;
                });
                timer.setRemoveOnCancelPolicy(true);
            }
            return timer.schedule(() -> locked(() -> {
                if (!isFreed()) {
                    try {
                        task.run();
                    } catch (RuntimeException e) {
                        LOG.error("timer task of IA {} failed", name, e);
                    }
                }
            }), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        }
    }

    void later(Runnable task) {
        schedule(0, task);
    }

    /** Runs consumer code (a CNO wait agent or stage) on the agent thread, never under a lock. */
    void runAgent(Runnable task) {
        synchronized (threadLock) {
            if (isFreed()) {
                return;
            }
            if (agents == null) {
                agents = Executors.newSingleThreadExecutor(r -> {
                    Thread t = Thread.ofPlatform().daemon().name("jdapl-emu-" + name + "-agent").unstarted(r);
                    agentThread = t;
                    return t;
                });
            }
            agents.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.warn("a CNO wait agent of IA {} failed", name, e);
                }
            });
        }
    }

    private void stopThreads() {
        fabric.stop();
        ScheduledThreadPoolExecutor t;
        ExecutorService a;
        synchronized (threadLock) {
            t = timer;
            a = agents;
            timer = null;
            agents = null;
        }
        if (t != null) {
            t.shutdownNow();
            awaitUnless(t, timerThread);
        }
        if (a != null) {
            a.shutdown();
            awaitUnless(a, agentThread);
        }
    }

    /** Waits until the executor's thread has ended, unless the caller is that thread. */
    private void awaitUnless(ExecutorService executor, Thread worker) {
        if (Thread.currentThread() == worker) {
            return;
        }
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS) || (worker != null && !worker.join(
                    java.time.Duration.ofSeconds(5)))) {
                LOG.warn("a thread of IA {} did not stop within 5 s", name);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- connection requests

    /**
     * A connection request of {@code attempt} arrives on {@code qual} (a CSP port when
     * {@code common}) (fabric lock held).
     *
     * @return false if nobody listens there or the backlog is full (NON_PEER_REJECTED)
     */
    boolean deliverRequest(ConnectAttempt attempt, TcpConnection connection, long qual, boolean common, byte[] privateData, SocketAddress from,
                           long fromPort) {
        if (isFreed()) {
            return false;
        }
        EmuEvd evd;
        ServicePoint point;
        EmuEp localEp = null;
        EmuPsp psp = null;
        if (common) {
            EmuCsp csp = qual > 0 && qual <= 0xffff ? commonListeners.get((int) qual) : null;
            if (csp == null) {
                return false;
            }
            evd = csp.evd();
            point = csp;
        } else {
            EmuObject listener = listeners.get(qual);
            if (listener instanceof EmuPsp p) {
                if (p.backlogFull()) {
                    return false;
                }
                psp = p;
                evd = p.evd();
                point = p;
                if (p.flag() == PspFlag.PROVIDER) {
                    localEp = new EmuEp(this, null, null, null, evd.accepts(EvdFlag.CONNECTION) ? evd : null, null,
                            EpAttributes.defaults(), EpState.TENTATIVE_CONNECTION_PENDING, true);
                    objects.add(localEp);
                }
            } else if (listener instanceof EmuRsp r) {
                evd = r.evd();
                point = null;
                localEp = r.ep();
                r.destroy();
                forget(r);
            } else {
                return false;
            }
        }
        EmuCr cr = new EmuCr(this, attempt, connection, qual, from, fromPort, privateData, localEp, psp);
        objects.add(cr);
        if (localEp != null) {
            localEp.requestArrived(cr);
        }
        if (attempt != null) {
            attempt.delivered = true;
        }
        post(evd, new DatEvent.ConnectionRequest(evd, point, address, qual, cr, false), true);
        return true;
    }

    boolean isListening(long qual) {
        return listeners.containsKey(qual);
    }

    void stopListening(long qual, EmuObject point) {
        listeners.remove(qual, point);
    }

    void stopCommonListening(int port, EmuCsp csp) {
        if (commonListeners.remove(port, csp) && fabric instanceof TcpFabric tcp) {
            tcp.stopCommon(port);
        }
    }

    void forget(EmuObject object) {
        objects.remove(object);
    }

    // ---------------------------------------------------------------- contexts

    int newRmrContext() {
        int ctx;
        do {
            ctx = RANDOM.nextInt();
        } while (ctx == 0 || contexts.containsKey(ctx));
        return ctx;
    }

    private int newLmrContext() {
        int ctx;
        do {
            ctx = RANDOM.nextInt();
        } while (ctx == 0 || lmrContexts.contains(ctx));
        lmrContexts.add(ctx);
        return ctx;
    }

    void registerContext(int ctx, RemoteTarget target) {
        contexts.put(ctx, target);
    }

    void unregisterContext(int ctx) {
        if (ctx != 0) {
            contexts.remove(ctx);
        }
    }

    void releaseLmrContext(int ctx) {
        lmrContexts.remove(ctx);
    }

    /** The memory a context of this IA exposes to {@code ep}'s connection, or null if refused. */
    MemorySegment resolveContext(int ctx, EmuEp ep, long address, long length, MemPriv needed) {
        RemoteTarget target = contexts.get(ctx);
        return target == null ? null : target.resolve(ep, address, length, needed);
    }

    /** A send with invalidate names {@code ctx}: revokes that RMR if {@code ep} may use it. */
    boolean invalidateRmr(int ctx, EmuEp ep) {
        if (contexts.get(ctx) instanceof EmuRmr rmr && rmr.pz() == ep.pz()
                && (rmr.scope() != RmrScope.EP || rmr.binding().ep() == ep)) {
            rmr.revoke();
            return true;
        }
        return false;
    }

    void revokeEpScopeRmrs(EmuEp ep) {
        for (EmuObject o : objects) {
            if (o instanceof EmuRmr rmr) {
                rmr.revokeIfBoundTo(ep);
            }
        }
    }

    // ---------------------------------------------------------------- fault hooks

    void setHeld(boolean hold) {
        locked(() -> {
            checkLive();
            held = hold;
            fabric.heldChanged();
            if (!hold) {
                for (EmuObject o : new ArrayList<>(objects)) {
                    if (o instanceof EmuEp ep && !ep.isFreed()) {
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
        return new IaQuery(asyncEvd, attributes, EmuLimits.providerAttributes());
    }

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
            teardown(false, null);
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
            teardown(true, reason);
            return true;
        });
        if (closedNow) {
            stopThreads();
        }
    }

    private void teardown(boolean catastrophic, String reason) {
        if (catastrophic) {
            post(asyncEvd, new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, this, 0,
                    reason == null ? "the IA was aborted" : reason), true);
        }
        List<EmuObject> all = new ArrayList<>(objects);
        for (EmuObject o : all) {
            if (o instanceof EmuEp ep && !ep.isFreed()) {
                ep.teardown(catastrophic);
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuCr cr when !cr.isFreed() -> cr.destroy();
                case EmuPsp psp when !psp.isFreed() -> psp.destroy();
                case EmuRsp rsp when !rsp.isFreed() -> rsp.destroy();
                case EmuCsp csp when !csp.isFreed() -> csp.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuRmr rmr when !rmr.isFreed() -> rmr.destroy();
                case EmuSrq srq when !srq.isFreed() -> srq.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuLmr lmr when !lmr.isFreed() -> lmr.destroy();
                case EmuCno cno when !cno.isFreed() -> cno.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuEvd evd when !evd.isFreed() -> evd.destroy();
                case EmuPz pz -> pz.markFreed();
                default -> {
                }
            }
        }
        objects.clear();
        listeners.clear();
        commonListeners.clear();
        contexts.clear();
        lmrContexts.clear();
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
            for (EmuObject o : objects) {
                counts.merge(o.kind(), 1, Integer::sum);
            }
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
        objects.add(object);
        return object;
    }

    @Override
    public EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags) {
        return locked(() -> {
            checkLive();
            if (minQlen < 1 || minQlen > EmuLimits.MAX_EVD_QLEN) {
                throw DatException.invalidParameter(2, "EVD length " + minQlen + " is not in 1.."
                        + EmuLimits.MAX_EVD_QLEN);
            }
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
        return locked(() -> {
            checkLive();
            EmuPz p = own(pz, EmuPz.class, HandleType.PZ);
            EmuEvd r = recvEvd == null ? null : ownEvd(recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV);
            EmuEvd q = requestEvd == null ? null : ownEvd(requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST);
            EmuEvd c = connectEvd == null ? null : ownEvd(connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN);
            checkStreams(r, q, c);
            EmuSrq s = srq == null ? null : own(srq, EmuSrq.class, HandleType.SRQ);
            if (s != null && s.pz() != p) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the SRQ belongs to another PZ");
            }
            EpAttributes a = checkEpAttributes(attributes == null ? EpAttributes.defaults() : attributes, s != null);
            return add(new EmuEp(this, p, r, q, c, s, a, EpState.UNCONNECTED, false));
        });
    }

    private EmuEvd crEvd(EventDispatcher evd) {
        EmuEvd e = ownEvd(evd, DatReturnSubtype.INVALID_HANDLE_EVD_CR);
        if (!e.accepts(EvdFlag.CR)) {
            throw DatException.invalidParameter(3, "the EVD lacks the CR stream");
        }
        return e;
    }

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        return locked(() -> {
            checkLive();
            EmuEvd e = crEvd(crEvd);
            if (flag == null) {
                throw DatException.invalidParameter(4, "no PSP flag");
            }
            if (listeners.containsKey(connQual)) {
                throw new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + connQual
                        + " is in use on IA " + name);
            }
            return listen(connQual, new EmuPsp(this, connQual, e, flag));
        });
    }

    private <T extends EmuObject> T listen(long qual, T point) {
        listeners.put(qual, point);
        return add(point);
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        return locked(() -> {
            checkLive();
            EmuEvd e = crEvd(crEvd);
            if (flag == null) {
                throw DatException.invalidParameter(3, "no PSP flag");
            }
            long qual = nextAnyQual;
            while (listeners.containsKey(qual)) {
                qual++;
            }
            nextAnyQual = qual + 1;
            return listen(qual, new EmuPsp(this, qual, e, flag));
        });
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        return locked(() -> {
            checkLive();
            EmuEp endpoint = own(ep, EmuEp.class, HandleType.EP);
            EmuEvd e = crEvd(crEvd);
            if (endpoint.state() != EpState.UNCONNECTED) {
                throw endpoint.state().invalid("dat_rsp_create");
            }
            if (listeners.containsKey(connQual)) {
                throw new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + connQual
                        + " is in use on IA " + name);
            }
            endpoint.reserve();
            return listen(connQual, new EmuRsp(this, connQual, e, endpoint));
        });
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress cspAddress, EventDispatcher crEvd) {
        return locked(() -> {
            checkLive();
            EmuEvd e = crEvd(crEvd);
            if (fabric instanceof TcpFabric tcp) {
                if (!(cspAddress instanceof InetSocketAddress inet) || inet.isUnresolved()) {
                    throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_MALFORMED,
                            "a CSP on the tcp fabric listens on an IP address and port, not " + cspAddress);
                }
                InetSocketAddress bound = tcp.listenCommon(inet);
                EmuCsp csp = new EmuCsp(this, bound, e);
                commonListeners.put(bound.getPort(), csp);
                return add(csp);
            }
            if (!(cspAddress instanceof InetSocketAddress inet) || inet.isUnresolved()
                    || !inet.getAddress().equals(((InetSocketAddress) address).getAddress())) {
                throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_UNSUPPORTED,
                        "a CSP listens on this IA's address " + address + ", not " + cspAddress);
            }
            int port = inet.getPort();
            if (port == 0) {
                port = 1024;
                while (port <= 0xffff && commonListeners.containsKey(port)) {
                    port++;
                }
                if (port > 0xffff) {
                    throw new DatException(DatReturnType.PORT_IN_USE, "every CSP port of IA " + name + " is in use");
                }
            } else if (commonListeners.containsKey(port)) {
                throw new DatException(DatReturnType.PORT_IN_USE, "CSP port " + port + " is in use on IA " + name);
            }
            EmuCsp csp = new EmuCsp(this, new InetSocketAddress(inet.getAddress(), port), e);
            commonListeners.put(port, csp);
            return add(csp);
        });
    }

    @Override
    public LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
                                       VaType vaType) {
        return locked(() -> {
            checkLive();
            EmuPz p = own(pz, EmuPz.class, HandleType.PZ);
            if (region == null || privileges == null || vaType == null) {
                throw DatException.invalidParameter(region == null ? 2 : privileges == null ? 3 : 4,
                        "region, privileges and VA type must be given");
            }
            if (region.byteSize() == 0) {
                throw new DatException(DatReturnType.LENGTH_ERROR, "an LMR of 0 bytes");
            }
            if (!region.isAccessibleBy(PROBE)) {
                throw DatException.invalidParameter(2, "the segment is confined to one thread; register a segment "
                        + "of a shared, global or automatic arena, or a heap segment");
            }
            if (region.isReadOnly() && (privileges.contains(MemPriv.LOCAL_WRITE)
                    || privileges.contains(MemPriv.REMOTE_WRITE))) {
                throw DatException.invalidParameter(3, "write privileges on a read-only segment");
            }
            boolean remote = privileges.contains(MemPriv.REMOTE_READ) || privileges.contains(MemPriv.REMOTE_WRITE);
            int rmrContext = remote ? newRmrContext() : 0;
            EmuLmr lmr = new EmuLmr(this, p, region, privileges, vaType, newLmrContext(), rmrContext);
            if (remote) {
                registerContext(rmrContext, lmr);
            }
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
            if (srqAttributes == null) {
                throw DatException.invalidParameter(3, "no SRQ attributes");
            }
            if (srqAttributes.maxRecvDtos() > EmuLimits.MAX_RECV_PER_SRQ
                    || srqAttributes.maxRecvIov() > EmuLimits.MAX_IOV) {
                throw DatException.invalidParameter(3, "SRQ attributes over the IA's limits: " + srqAttributes);
            }
            p.use();
            return add(new EmuSrq(this, p, srqAttributes));
        });
    }

    @Override
    public void lmrSyncRdmaRead(List<LmrTriplet> segments) {
        syncSegments(segments);
    }

    @Override
    public void lmrSyncRdmaWrite(List<LmrTriplet> segments) {
        syncSegments(segments);
    }

    /** Memory of this JVM is coherent: checking the segments and a full fence is all a sync needs. */
    private void syncSegments(List<LmrTriplet> segments) {
        locked(() -> {
            checkLive();
            if (segments == null) {
                throw DatException.invalidParameter(2, "no segments");
            }
            for (LmrTriplet t : segments) {
                if (t == null) {
                    throw DatException.invalidParameter(2, "a null segment");
                }
                if (t.length() == 0) {
                    continue;
                }
                EmuLmr lmr = own(t.lmr(), EmuLmr.class, HandleType.LMR);
                long size = lmr.segment().byteSize();
                if (t.offset() > size || t.length() > size - t.offset()) {
                    throw DatException.invalidParameter(2, "segment outside its LMR");
                }
            }
        });
        VarHandle.fullFence();
    }

    /** Whether {@code ia} has objects other than the asynchronous EVD (for tests). */
    Map<HandleType, Integer> objectCounts() {
        Map<HandleType, Integer> counts = new EnumMap<>(HandleType.class);
        countObjects(counts);
        return counts;
    }
}
