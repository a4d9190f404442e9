package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jdapl.dat.Cno;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
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
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Libc;
import org.jdapl.provider.ofa.verbs.Structs.IbvAsyncEvent;
import org.jdapl.provider.ofa.verbs.Structs.IbvCompChannel;
import org.jdapl.provider.ofa.verbs.Structs.IbvCq;
import org.jdapl.provider.ofa.verbs.Structs.IbvQp;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpCap;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpInitAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvMr;
import org.jdapl.provider.ofa.verbs.Structs.IbvMw;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An IA of the OFA provider on one device port. It owns a completion channel shared by the CQs of
 * its EVDs, an rdma_cm event channel for its service points, and one event thread that waits on
 * both and on the device's asynchronous events. Object creation and free go through the IA's lock;
 * closing frees everything in dependency order (service points, EPs, RMRs, LMRs, EVDs, CNOs, PZs,
 * then the channels and the device).
 */
final class OfaIa extends OfaHandle implements InterfaceAdapter, OfaEventLoop.Handler {
    private static final Logger LOG = LoggerFactory.getLogger(OfaIa.class);
    /** The IAs of each device context (shared by the IAs of a process), for the context's async events. */
    private static final Map<Long, Set<OfaIa>> BY_CONTEXT = new ConcurrentHashMap<>();

    private final OfaProvider provider;
    private final String name;
    /** The private data convention on the wire: OFED's for ofa-v2-* names, jdapl's otherwise. */
    final PrivateData wire;
    private final OfaDevice device;
    private final ObjectCounts counts;
    private final ReentrantLock lock = new ReentrantLock();
    private final MemorySegment compChannel;
    private final MemorySegment cmChannel;
    private final OfaEventLoop loop;
    private final OfaEvd asyncEvd;
    private final InetSocketAddress address;
    private final Set<OfaPz> pzs = new LinkedHashSet<>();
    private final Set<OfaEvd> evds = new LinkedHashSet<>();
    private final Set<OfaCno> cnos = new LinkedHashSet<>();
    private final Set<OfaLmr> lmrs = new LinkedHashSet<>();
    /**
     * How many LMRs have been freed (written under the lock): a post whose segments were checked
     * before a free checks them again ({@link FilledSges}).
     */
    private volatile int lmrFrees;
    private final Set<OfaRmr> rmrs = new LinkedHashSet<>();
    private final Set<OfaEp> eps = new LinkedHashSet<>();
    private final Set<OfaPsp> psps = new LinkedHashSet<>();
    private final Set<OfaRsp> rsps = new LinkedHashSet<>();
    private final Set<OfaCsp> csps = new LinkedHashSet<>();
    private final Set<OfaSrq> srqs = new LinkedHashSet<>();
    /** Connection requests not answered yet. */
    private final Set<OfaCr> crs = ConcurrentHashMap.newKeySet();
    /** CQ address to EVD, for completion events. */
    private final Map<Long, OfaEvd> evdByCq = new ConcurrentHashMap<>();
    /** QP number to EP, for work completions. */
    private final Map<Integer, OfaEp> epByQpNum = new ConcurrentHashMap<>();
    /** QP address to EP, for QP async events. */
    private final Map<Long, OfaEp> epByQp = new ConcurrentHashMap<>();
    /** rdma_cm ID address to the EP that owns it, for rdma_cm events. */
    private final Map<Long, OfaEp> epByCmId = new ConcurrentHashMap<>();
    /** rdma_cm ID address to an unanswered request. */
    private final Map<Long, OfaCr> crByCmId = new ConcurrentHashMap<>();
    /** Listening rdma_cm ID address to its service point (PSP, RSP or CSP). */
    private final Map<Long, Object> listeners = new ConcurrentHashMap<>();
    /** A CQ for EPs created without a receive or request EVD (created on first need). */
    private MemorySegment nullCq = MemorySegment.NULL;
    /** Native buffers of the event thread, freed at close. */
    private final Arena buffers = Arena.ofShared();
    private final MemorySegment asyncEvent = buffers.allocate(IbvAsyncEvent.S.size(), 8);

    OfaIa(OfaProvider provider, String name, OfaDevice device, int asyncEvdMinQlen, ObjectCounts counts) {
        super(HandleType.IA);
        this.provider = provider;
        this.name = name;
        this.wire = PrivateData.of(name);
        this.device = device;
        this.counts = counts;
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
            throw resources(DatReturnSubtype.RESOURCE_DEVICE, "cannot set up IA " + name, e);
        }
        compChannel = ch;
        cmChannel = cm;
        asyncEvd = new OfaEvd(this, asyncEvdMinQlen, null, EnumSet.of(EvdFlag.ASYNC), true);
        loop = new OfaEventLoop(name, IbvCompChannel.FD.getInt(ch), device.context.asyncFd(),
                cm.equals(MemorySegment.NULL) ? -1 : RdmaCm.channelFd(cm), this);
        loop.start();
        BY_CONTEXT.computeIfAbsent(device.context.pointer().address(), k -> ConcurrentHashMap.newKeySet()).add(this);
        counts.opened(HandleType.IA);
        counts.opened(HandleType.EVD);
    }

    OfaDevice device() {
        return device;
    }

    SocketAddress address() {
        return address;
    }

    int maxEvdQlen() {
        return device.maxCqe;
    }

    OfaEventLoop loop() {
        return loop;
    }

    MemorySegment cmChannel() {
        return cmChannel;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IaQuery query() {
        live();
        return new IaQuery(asyncEvd, iaAttributes(), providerAttributes());
    }

    private IaAttributes iaAttributes() {
        OfaDevice d = device;
        return new IaAttributes(d.name, vendor(d.vendorId), d.hwVer, 0,
                firmwarePart(d.firmware, 0), firmwarePart(d.firmware, 1), address,
                d.maxQp, d.maxQpWr, d.maxQpRdAtom, d.maxQpInitRdAtom, d.maxCq, d.maxCqe, d.maxSge, d.maxMr,
                d.maxMrSize, d.maxPd, d.maxMsgSize, d.maxMsgSize, d.maxMw, d.maxSrq, d.maxSrqWr, wire.max,
                Verbs.get().hasRegMrIova(), d.specific());
    }

    private ProviderAttributes providerAttributes() {
        String[] ver = OfaProvider.VERSION.split("\\.");
        Map<String, String> specific = new HashMap<>();
        specific.put("connections", "rdma_cm RDMA_PS_TCP; connection qualifier = port (OFED's SID_TO_PORT: above"
                + " 0xffff qual % 32001 + 33534)");
        specific.put("private_data", wire == PrivateData.OFED
                ? wire.max + " bytes, OFED uDAPL's wire (no header; the receiver gets rdma_cm's whole buffer)"
                : wire.max + " bytes (rdma_cm REQ " + PrivateData.TRANSPORT_MAX + " less 1 length byte)");
        specific.put("libibverbs", Verbs.SONAME);
        specific.put("librdmacm", RdmaCm.unavailableReason() == null ? RdmaCm.SONAME : RdmaCm.unavailableReason());
        return new ProviderAttributes(OfaProvider.NAME, Integer.parseInt(ver[0]), Integer.parseInt(ver[1]),
                Dat.VERSION_MAJOR, Dat.VERSION_MINOR, true, Set.of(Qos.BEST_EFFORT),
                EnumSet.of(CompletionFlag.SUPPRESS, CompletionFlag.SOLICITED_WAIT, CompletionFlag.BARRIER_FENCE), false,
                wire.max, 64, true, device.maxSrq > 0, specific);
    }

    private static String vendor(int vendorId) {
        return switch (vendorId) {
            case 0x02c9 -> "Mellanox";
            case 0x1077 -> "QLogic";
            case 0x8086 -> "Intel";
            case 0x14e4 -> "Broadcom";
            case 0x15b3 -> "Mellanox";
            case 0 -> "none (software device)";
            case OfaDevice.RXE_VENDOR_ID -> "none (rdma_rxe, Soft-RoCE)";
            default -> "vendor 0x" + Integer.toHexString(vendorId);
        };
    }

    private static int firmwarePart(String fw, int index) {
        String[] p = fw.split("\\.");
        try {
            return index < p.length ? Integer.parseInt(p[index].trim()) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    // ---- close ----

    @Override
    public void close(CloseFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(2, "null close flag");
        }
        lock.lock();
        try {
            live();
            if (flag == CloseFlag.GRACEFUL) {
                int live = pzs.size() + evds.size() + cnos.size() + lmrs.size() + rmrs.size() + eps.size()
                        + psps.size() + rsps.size() + csps.size() + srqs.size();
                if (live > 0) {
                    throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_IA_IN_USE,
                            "IA " + name + " has " + live + " live object(s)");
                }
            }
            markFreed();
            freeEverything();
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

    /** Frees every object, in dependency order. Called under the lock. */
    private void freeEverything() {
        for (OfaPsp p : List.copyOf(psps)) {
            destroyPsp(p);
        }
        for (OfaRsp r : List.copyOf(rsps)) {
            destroyRsp(r);
        }
        for (OfaCsp c : List.copyOf(csps)) {
            destroyCsp(c);
        }
        for (OfaCr c : List.copyOf(crs)) {
            c.consume();
        }
        for (OfaEp e : List.copyOf(eps)) {
            destroyEp(e);
        }
        for (OfaSrq q : List.copyOf(srqs)) {
            destroySrq(q);
        }
        for (OfaRmr r : List.copyOf(rmrs)) {
            destroyRmr(r);
        }
        for (OfaLmr l : List.copyOf(lmrs)) {
            destroyLmr(l);
        }
        for (OfaEvd e : List.copyOf(evds)) {
            destroyEvd(e);
        }
        for (OfaCno c : List.copyOf(cnos)) {
            destroyCno(c);
        }
        for (OfaPz p : List.copyOf(pzs)) {
            destroyPz(p);
        }
    }

    /** Stops the event thread and releases the channels and the device (after the lock). */
    private void teardown() {
        loop.stop();
        Set<OfaIa> peers = BY_CONTEXT.get(device.context.pointer().address());
        if (peers != null) {
            peers.remove(this);
        }
        Verbs v = Verbs.get();
        lock.lock();
        try {
            if (!nullCq.equals(MemorySegment.NULL)) {
                quietly("ibv_destroy_cq", () -> v.destroyCq(nullCq));
                nullCq = MemorySegment.NULL;
            }
        } finally {
            lock.unlock();
        }
        quietly("ibv_destroy_comp_channel", () -> v.destroyCompChannel(compChannel));
        if (!cmChannel.equals(MemorySegment.NULL)) {
            quietly("rdma_destroy_event_channel", () -> RdmaCm.get().destroyEventChannel(cmChannel));
        }
        asyncEvd.closed();
        counts.closed(HandleType.EVD);
        buffers.close();
        device.close();
        counts.closed(HandleType.IA);
        provider.closed(this);
    }

    private static void quietly(String what, Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.warn("{} failed while closing", what, e);
        }
    }

    // ---- PZ ----

    @Override
    public ProtectionZone createPz() {
        lock.lock();
        try {
            live();
            MemorySegment pd;
            try {
                pd = Verbs.get().allocPd(device.context.pointer());
            } catch (VerbsException e) {
                throw resources(DatReturnSubtype.RESOURCE_PROTECTION_DOMAIN, "dat_pz_create", e);
            }
            OfaPz pz = new OfaPz(this, pd);
            pzs.add(pz);
            counts.opened(HandleType.PZ);
            return pz;
        } finally {
            lock.unlock();
        }
    }

    void freePz(OfaPz pz) {
        lock.lock();
        try {
            if (pz.isFreed()) {
                throw pz.alreadyFreed();
            }
            if (pz.users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_PZ_IN_USE,
                        "PZ is used by " + pz.users + " EP(s), LMR(s) or RMR(s)");
            }
            destroyPz(pz);
        } finally {
            lock.unlock();
        }
    }

    private void destroyPz(OfaPz pz) {
        pz.markFreed();
        pzs.remove(pz);
        quietly("ibv_dealloc_pd", () -> Verbs.get().deallocPd(pz.pd));
        counts.closed(HandleType.PZ);
    }

    private OfaPz ownPz(ProtectionZone pz, int arg) {
        if (!(pz instanceof OfaPz p) || p.ia != this) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_PZ,
                    "argument " + arg + " is not a PZ of IA " + name);
        }
        p.live();
        return p;
    }

    // ---- EVD and CNO ----

    @Override
    public EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags) {
        if (flags == null || flags.isEmpty()) {
            throw DatException.invalidParameter(4, "an EVD needs at least one event stream");
        }
        if (flags.contains(EvdFlag.ASYNC)) {
            throw DatException.invalidParameter(4, "the ofa provider has one asynchronous EVD per IA, made at open");
        }
        lock.lock();
        try {
            live();
            if (minQlen < 1 || minQlen > maxEvdQlen()) {
                throw DatException.invalidParameter(2, "EVD length " + minQlen + " is outside 1.." + maxEvdQlen());
            }
            OfaCno c = ownCno(cno, 3);
            OfaEvd evd = new OfaEvd(this, minQlen, c, flags, false);
            if (OfaEvd.needsCq(flags)) {
                Verbs v = Verbs.get();
                MemorySegment cq;
                try {
                    cq = v.createCq(device.context.pointer(), minQlen, compChannel);
                } catch (VerbsException e) {
                    throw resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_create", e);
                }
                try {
                    device.context.reqNotifyCq(cq, false);
                } catch (VerbsException e) {
                    v.destroyCq(cq);
                    throw resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_create", e);
                }
                evd.attachCq(cq, cqe(cq));
                evdByCq.put(cq.address(), evd);
            }
            if (c != null) {
                c.attach();
            }
            evds.add(evd);
            counts.opened(HandleType.EVD);
            return evd;
        } finally {
            lock.unlock();
        }
    }

    void freeEvd(OfaEvd evd) {
        lock.lock();
        try {
            if (evd.isFreed()) {
                throw evd.alreadyFreed();
            }
            if (evd.isAsync()) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                        "the asynchronous EVD of IA " + name + " is freed by closing the IA");
            }
            if (evd.users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_IN_USE,
                        "EVD is used by " + evd.users + " EP(s) or service point(s)");
            }
            evd.checkNoWaiters();
            destroyEvd(evd);
        } finally {
            lock.unlock();
        }
    }

    private void destroyEvd(OfaEvd evd) {
        evds.remove(evd);
        if (!evd.cq.equals(MemorySegment.NULL)) {
            evdByCq.remove(evd.cq.address());
            MemorySegment cq = evd.detachCq();
            // Waits until the event thread has acknowledged the CQ's events; it acks before any lock.
            quietly("ibv_destroy_cq", () -> Verbs.get().destroyCq(cq));
        }
        evd.closed();
        counts.closed(HandleType.EVD);
    }

    /** The entries a CQ has, as the device made it ({@code ibv_cq.cqe}). */
    private static int cqe(MemorySegment cq) {
        return IbvCq.CQE.getInt(cq.reinterpret(IbvCq.S.size()));
    }

    void resizeCq(OfaEvd evd, int qlen) {
        lock.lock();
        try {
            if (!evd.cq.equals(MemorySegment.NULL)) {
                int reserved = evd.reserved();
                if (reserved > qlen) {
                    throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE, reserved
                            + " completions may still come to the EVD (its EPs' queues), more than the new length "
                            + qlen);
                }
                try {
                    Verbs.get().resizeCq(evd.cq, qlen);
                } catch (VerbsException e) {
                    throw resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_resize", e);
                }
                evd.resized(cqe(evd.cq));
            }
        } finally {
            lock.unlock();
        }
    }

    void reportOverflow(OfaEvd evd) {
        if (evd != asyncEvd) {
            asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_EVD_OVERFLOW, evd, 0,
                    "EVD queue overflow"));
        } else {
            LOG.error("IA {}: asynchronous EVD overflow", name);
        }
    }

    @Override
    public Cno createCno(Consumer<EventDispatcher> waitAgent) {
        lock.lock();
        try {
            live();
            OfaCno c = new OfaCno(this, waitAgent);
            cnos.add(c);
            counts.opened(HandleType.CNO);
            return c;
        } finally {
            lock.unlock();
        }
    }

    void freeCno(OfaCno cno) {
        lock.lock();
        try {
            if (cno.isFreed()) {
                throw cno.alreadyFreed();
            }
            cno.checkFree();
            destroyCno(cno);
        } finally {
            lock.unlock();
        }
    }

    private void destroyCno(OfaCno cno) {
        cnos.remove(cno);
        cno.closed();
        counts.closed(HandleType.CNO);
    }

    OfaCno ownCno(Cno cno, int arg) {
        if (cno == null) {
            return null;
        }
        if (!(cno instanceof OfaCno c) || !cnos.contains(c)) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_CNO,
                    "argument " + arg + " is not a live CNO of IA " + name);
        }
        return c;
    }

    private OfaEvd ownEvd(EventDispatcher evd, DatReturnSubtype subtype, EvdFlag stream) {
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

    // ---- LMR ----

    @Override
    public LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
                                       VaType vaType) {
        if (region == null) {
            throw DatException.invalidParameter(3, "null memory segment");
        }
        if (privileges == null || vaType == null) {
            throw DatException.invalidParameter(privileges == null ? 4 : 5, "null privileges or VA type");
        }
        if (region.byteSize() == 0) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "an LMR of size 0 cannot be registered");
        }
        if (!region.isNative()) {
            throw DatException.invalidParameter(3, "a heap segment cannot be registered with the device (the "
                    + "garbage collector moves it); allocate the memory from an Arena");
        }
        if (region.isReadOnly() && (privileges.contains(MemPriv.LOCAL_WRITE)
                || privileges.contains(MemPriv.REMOTE_WRITE))) {
            throw DatException.invalidParameter(4, "write privileges on a read-only segment");
        }
        if (vaType == VaType.ZB && (region.address() & 0xfff) != 0) {
            throw DatException.invalidParameter(3, "a zero-based region must start on a page boundary (4096)");
        }
        lock.lock();
        try {
            live();
            OfaPz p = ownPz(pz, 2);
            int access = 0;
            if (privileges.contains(MemPriv.LOCAL_WRITE) || privileges.contains(MemPriv.REMOTE_WRITE)) {
                access |= Verbs.ACCESS_LOCAL_WRITE;
            }
            if (privileges.contains(MemPriv.REMOTE_WRITE)) {
                access |= Verbs.ACCESS_REMOTE_WRITE;
            }
            if (privileges.contains(MemPriv.REMOTE_READ)) {
                access |= Verbs.ACCESS_REMOTE_READ;
            }
            if (device.hasMwType1() || device.hasMwType2()) {
                access |= Verbs.ACCESS_MW_BIND;
            }
            Verbs v = Verbs.get();
            MemorySegment mr;
            try {
                mr = vaType == VaType.ZB
                        ? v.regMrIova(p.pd, region, region.byteSize(), 0, access)
                        : v.regMr(p.pd, region, region.byteSize(), access);
            } catch (VerbsException e) {
                if (e.errno() == Errno.EOPNOTSUPP && vaType == VaType.ZB) {
                    throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, DatReturnSubtype.NO_SUBTYPE,
                            "zero-based regions need ibv_reg_mr_iova2, which " + Verbs.SONAME + " lacks", e);
                }
                throw resources(DatReturnSubtype.RESOURCE_MEMORY_REGION,
                        "dat_lmr_create (ibv_reg_mr; is the memlock limit high enough? ulimit -l)", e);
            }
            mr = mr.reinterpret(IbvMr.S.size());
            OfaLmr lmr = new OfaLmr(this, p, mr, region, privileges, vaType, IbvMr.LKEY.getInt(mr),
                    IbvMr.RKEY.getInt(mr), IbvMr.LENGTH.getLong(mr));
            p.users++;
            lmrs.add(lmr);
            counts.opened(HandleType.LMR);
            return lmr;
        } finally {
            lock.unlock();
        }
    }

    /** How many LMRs of the IA have been freed so far. */
    int lmrFrees() {
        return lmrFrees;
    }

    void freeLmr(OfaLmr lmr) {
        lock.lock();
        try {
            if (lmr.isFreed()) {
                throw lmr.alreadyFreed();
            }
            if (lmr.boundRmrs.get() > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_LMR_IN_USE,
                        "LMR has " + lmr.boundRmrs.get() + " bound RMR(s)");
            }
            destroyLmr(lmr);
        } finally {
            lock.unlock();
        }
    }

    private void destroyLmr(OfaLmr lmr) {
        lmr.markFreed();
        lmrFrees = lmrFrees + 1;
        lmrs.remove(lmr);
        lmr.pz.users--;
        quietly("ibv_dereg_mr", () -> Verbs.get().deregMr(lmr.mr));
        counts.closed(HandleType.LMR);
    }

    @Override
    public void lmrSyncRdmaRead(List<LmrTriplet> segments) {
        checkTriplets(segments);
    }

    @Override
    public void lmrSyncRdmaWrite(List<LmrTriplet> segments) {
        checkTriplets(segments);
    }

    /** x86-64 DMA is cache coherent: syncing is checking that the triplets name live, local memory. */
    private void checkTriplets(List<LmrTriplet> segments) {
        live();
        if (segments == null) {
            throw DatException.invalidParameter(2, "null segment list");
        }
        for (LmrTriplet t : segments) {
            if (t == null) {
                throw DatException.invalidParameter(2, "null segment");
            }
            if (t.length() == 0) {
                continue;
            }
            if (!(t.lmr() instanceof OfaLmr l) || l.ia != this || l.isFreed()) {
                throw DatException.invalidParameter(2, "segment names no live LMR of IA " + name);
            }
            if (t.offset() + t.length() > l.segment().byteSize()) {
                throw DatException.invalidParameter(2, "segment " + t + " exceeds its LMR");
            }
        }
    }

    // ---- RMR ----

    RemoteMemoryRegion createRmr(OfaPz pz, RmrScope scope) {
        lock.lock();
        try {
            live();
            pz.live();
            int type = scope == RmrScope.PZ ? 1 : 2;
            boolean has = type == 1 ? device.hasMwType1() : device.hasMwType2();
            if (!has && device.windowsRefused() != null) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "RMRs are memory windows, and "
                        + device.windowsRefused());
            }
            if (!has) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "device " + device.name
                        + " has no memory windows of type " + type + " (needed for "
                        + (type == 1 ? "dat_rmr_create" : "dat_rmr_create_for_ep") + ")");
            }
            MemorySegment mw;
            try {
                mw = device.context.allocMw(pz.pd, type).reinterpret(IbvMw.S.size());
            } catch (VerbsException e) {
                if (e.errno() == Errno.EOPNOTSUPP) {
                    throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, DatReturnSubtype.NO_SUBTYPE,
                            "device " + device.name + " refuses memory windows of type " + type, e);
                }
                throw resources(DatReturnSubtype.RESOURCE_MEMORY_REGION, "dat_rmr_create (ibv_alloc_mw)", e);
            }
            OfaRmr rmr = new OfaRmr(this, pz, mw, scope);
            pz.users++;
            rmrs.add(rmr);
            counts.opened(HandleType.RMR);
            return rmr;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code dat_rmr_bind}: checks the handles, bounds and privileges, then posts the bind on the EP's
     * send queue ({@link OfaEp#bind}); the RMR is bound at once, and unbound again if the bind
     * completes in error.
     */
    int bindRmr(OfaRmr rmr, LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges, VaType va,
                Endpoint ep, long cookie, Set<CompletionFlag> flags) {
        OfaEp e;
        OfaLmr l = null;
        lock.lock();
        try {
            rmr.live();
            if (!(ep instanceof OfaEp x) || x.ia != this || x.isFreed()) {
                throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "not a live EP of IA " + name);
            }
            e = x;
            if (length != 0) {
                if (!(lmr instanceof OfaLmr y) || y.ia != this || y.isFreed()) {
                    throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_LMR,
                            "not a live LMR of IA " + name);
                }
                l = y;
                if (offset < 0 || length < 0 || offset + length > l.segment().byteSize()) {
                    throw DatException.invalidParameter(3, "bind range exceeds the LMR");
                }
                if (l.pz != rmr.pz || e.pz != rmr.pz) {
                    throw new DatException(DatReturnType.PROTECTION_VIOLATION, "RMR, LMR and EP are of different PZs");
                }
                if (privileges == null || !l.privileges().containsAll(privileges)) {
                    throw new DatException(DatReturnType.PRIVILEGES_VIOLATION,
                            "privileges " + privileges + " exceed the LMR's " + l.privileges());
                }
                if (va == VaType.ZB) {
                    throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                            "zero-based memory windows are not supported");
                }
            }
        } finally {
            lock.unlock();
        }
        int context = e.bind(rmr, l, offset, length, privileges, cookie, flags);
        synchronized (rmr) {
            if (rmr.boundLmr != null) {
                rmr.boundLmr.boundRmrs.decrementAndGet();
            }
            rmr.boundLmr = l;
            if (l != null) {
                l.boundRmrs.incrementAndGet();
            }
            rmr.boundOffset = length == 0 ? 0 : offset;
            rmr.boundLength = length;
            rmr.boundPrivileges = length == 0 || privileges == null ? Set.of() : Set.copyOf(privileges);
            rmr.rmrContext = context;
            rmr.vaType = va == null ? VaType.VA : va;
        }
        return context;
    }

    /** A bind completed in error: the window is not bound. */
    void bindFailed(OfaRmr rmr) {
        synchronized (rmr) {
            if (rmr.boundLmr != null) {
                rmr.boundLmr.boundRmrs.decrementAndGet();
                rmr.boundLmr = null;
            }
            rmr.boundLength = 0;
            rmr.rmrContext = 0;
        }
    }

    void freeRmr(OfaRmr rmr) {
        lock.lock();
        try {
            if (rmr.isFreed()) {
                throw rmr.alreadyFreed();
            }
            destroyRmr(rmr);
        } finally {
            lock.unlock();
        }
    }

    private void destroyRmr(OfaRmr rmr) {
        rmr.markFreed();
        rmrs.remove(rmr);
        bindFailed(rmr);
        rmr.pz.users--;
        quietly("ibv_dealloc_mw", () -> device.context.deallocMw(rmr.mw));
        counts.closed(HandleType.RMR);
    }

    // ---- EP ----

    @Override
    public Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, EpAttributes attributes) {
        return newEp(pz, recvEvd, requestEvd, connectEvd, null, attributes);
    }

    @Override
    public Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        if (!(srq instanceof OfaSrq q) || q.ia != this || q.isFreed()) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_SRQ, "not a live SRQ of IA " + name);
        }
        return newEp(pz, recvEvd, requestEvd, connectEvd, q, attributes);
    }

    private Endpoint newEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                           EventDispatcher connectEvd, OfaSrq srq, EpAttributes attributes) {
        EpAttributes attrs = attributes == null ? defaultEpAttributes() : withinRdmaLimit(attributes);
        lock.lock();
        try {
            live();
            OfaPz p = ownPz(pz, 2);
            OfaEvd recv = ownEvd(recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV, EvdFlag.DTO);
            OfaEvd request = ownEvd(requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST, EvdFlag.DTO);
            OfaEvd connect = ownEvd(connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN, EvdFlag.CONNECTION);
            checkEpAttributes(attrs);
            if (srq != null && srq.pz != p) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the SRQ is of another PZ");
            }
            OfaEp ep = new OfaEp(this, p, recv, request, connect, srq, attrs);
            try {
                MemorySegment qp = createQp(ep);
                ep.attachQp(qp, IbvQp.QP_NUM.getInt(qp));
            } catch (VerbsException e) {
                if (ep.qp != null) {
                    quietly("ibv_destroy_qp", () -> Verbs.get().destroyQp(ep.qp));
                }
                ep.freeNative();
                throw resources(DatReturnSubtype.RESOURCE_TEP, "dat_ep_create (ibv_create_qp)", e);
            }
            registerQp(ep);
            ep.coverQueues();
            p.users++;
            for (OfaEvd e : new OfaEvd[] {recv, request, connect}) {
                if (e != null) {
                    e.users++;
                }
            }
            if (srq != null) {
                srq.users++;
            }
            eps.add(ep);
            counts.opened(HandleType.EP);
            return ep;
        } finally {
            lock.unlock();
        }
    }

    /** An RC queue pair on the EP's CQs (and SRQ) with its attributes. */
    private MemorySegment createQp(OfaEp ep) {
        EpAttributes attrs = ep.attributes;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment init = a.allocate(IbvQpInitAttr.S.size(), 8);
            IbvQpInitAttr.SEND_CQ.setPointer(init, ep.requestEvd != null ? ep.requestEvd.cq : nullCq());
            IbvQpInitAttr.RECV_CQ.setPointer(init, ep.recvEvd != null ? ep.recvEvd.cq : nullCq());
            if (ep.srq != null) {
                IbvQpInitAttr.SRQ.setPointer(init, ep.srq.srq);
            }
            MemorySegment cap = IbvQpInitAttr.CAP.slice(init, IbvQpCap.S.size());
            IbvQpCap.MAX_SEND_WR.setInt(cap, attrs.maxRequestDtos());
            IbvQpCap.MAX_RECV_WR.setInt(cap, ep.srq != null ? 0 : Math.max(1, attrs.maxRecvDtos()));
            IbvQpCap.MAX_SEND_SGE.setInt(cap, attrs.maxRequestIov());
            IbvQpCap.MAX_RECV_SGE.setInt(cap, ep.srq != null ? 0 : attrs.maxRecvIov());
            IbvQpInitAttr.QP_TYPE.setInt(init, Verbs.QPT_RC);
            IbvQpCap.MAX_INLINE_DATA.setInt(cap, OfaEp.INLINE_MAX);
            MemorySegment qp;
            try {
                qp = Verbs.get().createQp(ep.pz.pd, init);
            } catch (VerbsException e) {
                // A device without inline data: the same queue pair without it.
                IbvQpCap.MAX_INLINE_DATA.setInt(cap, 0);
                qp = Verbs.get().createQp(ep.pz.pd, init);
            }
            // ibv_create_qp writes the capabilities the queue pair got into cap.
            ep.inlineLimit = Math.min(OfaEp.INLINE_MAX, Math.max(0, IbvQpCap.MAX_INLINE_DATA.getInt(cap)));
            return qp.reinterpret(IbvQp.S.size());
        }
    }

    private void registerQp(OfaEp ep) {
        epByQpNum.put(ep.qpNum, ep);
        epByQp.put(ep.qp.address(), ep);
    }

    private void unregisterQp(OfaEp ep) {
        epByQpNum.remove(ep.qpNum, ep);
        epByQp.remove(ep.qp.address(), ep);
    }

    /** {@code dat_ep_reset}: destroys the EP's queue pair and gives it a new one (EP lock held). */
    void replaceQp(OfaEp ep) {
        unregisterQp(ep);
        MemorySegment old = ep.qp;
        quietly("ibv_destroy_qp", () -> Verbs.get().destroyQp(old));
        MemorySegment qp;
        try {
            qp = createQp(ep);
        } catch (VerbsException e) {
            throw resources(DatReturnSubtype.RESOURCE_TEP, "dat_ep_reset (ibv_create_qp)", e);
        }
        ep.attachQp(qp, IbvQp.QP_NUM.getInt(qp));
        registerQp(ep);
    }

    /**
     * The attributes with the largest RDMA size lowered to the port's message size limit (an RDMA
     * Read or Write is one message on the wire); {@code dat_ep_query} shows the value in force.
     */
    private EpAttributes withinRdmaLimit(EpAttributes a) {
        if (a.maxRdmaSize() <= device.maxMsgSize) {
            return a;
        }
        return new EpAttributes(a.maxMessageSize(), device.maxMsgSize, a.qos(), a.recvCompletionFlags(),
                a.requestCompletionFlags(), a.maxRecvDtos(), a.maxRequestDtos(), a.maxRecvIov(), a.maxRequestIov(),
                a.maxRdmaReadIn(), a.maxRdmaReadOut(), a.srqSoftHighWatermark());
    }

    /** {@link EpAttributes#defaults()} within the device's limits. */
    private EpAttributes defaultEpAttributes() {
        EpAttributes d = EpAttributes.defaults();
        int depth = Math.min(256, device.maxQpWr);
        int sge = Math.min(d.maxRequestIov(), device.maxSge);
        return new EpAttributes(Math.min(d.maxMessageSize(), device.maxMsgSize),
                Math.min(d.maxRdmaSize(), device.maxMsgSize), d.qos(), d.recvCompletionFlags(),
                d.requestCompletionFlags(), depth, depth, sge, sge, Math.min(d.maxRdmaReadIn(), device.maxQpRdAtom),
                Math.min(d.maxRdmaReadOut(), device.maxQpInitRdAtom), d.srqSoftHighWatermark());
    }

    private void checkEpAttributes(EpAttributes a) {
        if (a.maxRequestDtos() > device.maxQpWr || a.maxRecvDtos() > device.maxQpWr) {
            throw DatException.invalidParameter(6, "queue depth over the device's " + device.maxQpWr);
        }
        if (a.maxRequestIov() > device.maxSge || a.maxRecvIov() > device.maxSge) {
            throw DatException.invalidParameter(6, "segments per DTO over the device's " + device.maxSge);
        }
        if (a.maxMessageSize() > device.maxMsgSize || a.maxRdmaSize() > device.maxMsgSize) {
            throw DatException.invalidParameter(6, "message size over the port's " + device.maxMsgSize);
        }
        if (a.maxRdmaReadIn() > device.maxQpRdAtom || a.maxRdmaReadOut() > device.maxQpInitRdAtom) {
            throw DatException.invalidParameter(6, "RDMA Reads in flight over the device's limits");
        }
        if (a.qos() != Qos.BEST_EFFORT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "QoS " + a.qos() + " is not supported");
        }
    }

    private MemorySegment nullCq() {
        if (nullCq.equals(MemorySegment.NULL)) {
            nullCq = Verbs.get().createCq(device.context.pointer(), 1, MemorySegment.NULL);
        }
        return nullCq;
    }

    void freeEp(OfaEp ep) {
        lock.lock();
        try {
            if (ep.isFreed()) {
                throw ep.alreadyFreed();
            }
            EpState st = ep.state();
            if (st == EpState.RESERVED || st == EpState.PASSIVE_CONNECTION_PENDING
                    || st == EpState.TENTATIVE_CONNECTION_PENDING) {
                throw st.invalid("dat_ep_free");
            }
            destroyEp(ep);
        } finally {
            lock.unlock();
        }
    }

    /** Frees an EP: its ID (a DREQ or REJ for the peer), its queue pair, no further events. IA lock held. */
    private void destroyEp(OfaEp ep) {
        ep.lock.lock();
        try {
            ep.markFreed();
        } finally {
            ep.lock.unlock();
        }
        eps.remove(ep);
        if (ep.rsp != null && !ep.rsp.isFreed()) {
            destroyRsp(ep.rsp);
        }
        if (ep.pendingCr != null) {
            ep.pendingCr.consume();
        }
        ep.release();
        unregisterQp(ep);
        quietly("ibv_destroy_qp", () -> Verbs.get().destroyQp(ep.qp));
        // Completions of the queue pair still in its CQs take room there until polled (and dropped).
        ep.pollCqs();
        ep.uncoverQueues();
        ep.freeNative();
        ep.pz.users--;
        for (OfaEvd e : new OfaEvd[] {ep.recvEvd, ep.requestEvd, ep.connectEvd}) {
            if (e != null) {
                e.users--;
            }
        }
        if (ep.srq != null) {
            ep.srq.users--;
        }
        counts.closed(HandleType.EP);
    }

    /** An EP's connection starts (or stops) ending: its CQs are kept armed and polled until it has. */
    void watchClosing(OfaEp ep, boolean closing) {
        for (OfaEvd e : ep.recvEvd == ep.requestEvd ? new OfaEvd[] {ep.requestEvd}
                : new OfaEvd[] {ep.recvEvd, ep.requestEvd}) {
            if (e == null) {
                continue;
            }
            if (closing) {
                e.closingUsers.incrementAndGet();
                loop.schedule(0, e::armAndPoll);
            } else {
                e.closingUsers.decrementAndGet();
            }
        }
    }

    void registerEp(MemorySegment cmId, OfaEp ep) {
        epByCmId.put(cmId.address(), ep);
    }

    void unregisterEp(MemorySegment cmId) {
        epByCmId.remove(cmId.address());
    }

    void unregisterCr(MemorySegment cmId) {
        crByCmId.remove(cmId.address());
    }

    void crDone(OfaCr cr) {
        if (crs.remove(cr)) {
            counts.closed(HandleType.CR);
        }
    }

    // ---- service points ----

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        return listen(connQual, crEvd, flag);
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        return listen(-1, crEvd, flag);
    }

    private OfaEvd crEvd(EventDispatcher crEvd, int arg) {
        OfaEvd evd = ownEvd(crEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CR, null);
        if (evd == null || !evd.flags().contains(EvdFlag.CR)) {
            throw DatException.invalidParameter(arg, "the service point's EVD must have the CR stream");
        }
        return evd;
    }

    /** An rdma_cm ID bound to the IA address and {@code port} (0: any) and listening. */
    private MemorySegment listenId(int port, long connQual, String what) {
        if (cmChannel.equals(MemorySegment.NULL)) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                    "service points need rdma_cm: " + RdmaCm.unavailableReason());
        }
        RdmaCm cm = RdmaCm.get();
        MemorySegment id;
        try {
            id = cm.createId(cmChannel);
        } catch (VerbsException e) {
            throw resources(DatReturnSubtype.NO_SUBTYPE, what + " (rdma_create_id)", e);
        }
        try {
            cm.bindAddr(id, new InetSocketAddress(address.getAddress(), port));
            cm.listen(id, 1024);
            return id;
        } catch (VerbsException e) {
            cm.destroyId(id);
            if (e.errno() == Errno.EADDRINUSE) {
                throw port == 0
                        ? new DatException(DatReturnType.CONN_QUAL_UNAVAILABLE, DatReturnSubtype.NO_SUBTYPE,
                                "no free connection qualifier", e)
                        : new DatException(DatReturnType.CONN_QUAL_IN_USE, DatReturnSubtype.NO_SUBTYPE,
                                "connection qualifier " + connQual + " (port " + port + ") is in use on " + address, e);
            }
            throw resources(DatReturnSubtype.NO_SUBTYPE, what + " (rdma_bind_addr/rdma_listen)", e);
        }
    }

    private PublicServicePoint listen(long connQual, EventDispatcher crEvd, PspFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(4, "null PSP flag");
        }
        lock.lock();
        try {
            live();
            OfaEvd evd = crEvd(crEvd, 3);
            if (flag == PspFlag.PROVIDER) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                        "PSPs that create the EP (DAT_PSP_PROVIDER_FLAG) are not supported: a verbs queue pair needs "
                                + "the PZ and completion queues only the consumer can name");
            }
            int port = connQual < 0 ? 0 : PrivateData.port(connQual);
            MemorySegment id = listenId(port, connQual, "dat_psp_create");
            long qual = connQual < 0 ? RdmaCm.sourceAddress(id).getPort() : connQual;
            OfaPsp psp = new OfaPsp(this, id, qual, evd, flag);
            listeners.put(id.address(), psp);
            evd.users++;
            psps.add(psp);
            counts.opened(HandleType.PSP);
            return psp;
        } finally {
            lock.unlock();
        }
    }

    void freePsp(OfaPsp psp) {
        lock.lock();
        try {
            if (psp.isFreed()) {
                throw psp.alreadyFreed();
            }
            destroyPsp(psp);
        } finally {
            lock.unlock();
        }
    }

    private void destroyPsp(OfaPsp psp) {
        psp.markFreed();
        psps.remove(psp);
        listeners.remove(psp.id.address());
        // Waits for the ID's events to be acknowledged; the event thread acks before dispatching.
        quietly("rdma_destroy_id", () -> RdmaCm.get().destroyId(psp.id));
        psp.evd.users--;
        counts.closed(HandleType.PSP);
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        lock.lock();
        try {
            live();
            OfaEvd evd = crEvd(crEvd, 4);
            if (!(ep instanceof OfaEp e) || e.ia != this || e.isFreed()) {
                throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "not a live EP of IA " + name);
            }
            e.lock.lock();
            try {
                if (e.state() != EpState.UNCONNECTED) {
                    throw e.state().invalid("dat_rsp_create");
                }
                MemorySegment id = listenId(PrivateData.port(connQual), connQual, "dat_rsp_create");
                OfaRsp rsp = new OfaRsp(this, id, connQual, evd, e);
                e.rsp = rsp;
                e.setPassiveState(EpState.RESERVED);
                listeners.put(id.address(), rsp);
                evd.users++;
                rsps.add(rsp);
                counts.opened(HandleType.RSP);
                return rsp;
            } finally {
                e.lock.unlock();
            }
        } finally {
            lock.unlock();
        }
    }

    void freeRsp(OfaRsp rsp) {
        lock.lock();
        try {
            if (rsp.isFreed()) {
                throw rsp.alreadyFreed();
            }
            destroyRsp(rsp);
            rsp.ep.lock.lock();
            try {
                if (rsp.ep.state() == EpState.RESERVED) {
                    rsp.ep.setPassiveState(EpState.UNCONNECTED);
                    rsp.ep.rsp = null;
                }
            } finally {
                rsp.ep.lock.unlock();
            }
        } finally {
            lock.unlock();
        }
    }

    private void destroyRsp(OfaRsp rsp) {
        if (!rsp.markFreed()) {
            return;
        }
        rsps.remove(rsp);
        listeners.remove(rsp.id.address());
        quietly("rdma_destroy_id", () -> RdmaCm.get().destroyId(rsp.id));
        rsp.evd.users--;
        counts.closed(HandleType.RSP);
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress cspAddress, EventDispatcher crEvd) {
        if (!(cspAddress instanceof InetSocketAddress isa) || isa.isUnresolved()
                || !isa.getAddress().equals(address.getAddress()) || isa.getPort() < 1) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE, cspAddress
                    + " is not this IA's address " + address.getAddress().getHostAddress() + " with a port");
        }
        lock.lock();
        try {
            live();
            OfaEvd evd = crEvd(crEvd, 3);
            MemorySegment id;
            try {
                id = listenId(isa.getPort(), isa.getPort(), "dat_csp_create");
            } catch (DatException e) {
                if (e.type() == DatReturnType.CONN_QUAL_IN_USE) {
                    throw new DatException(DatReturnType.PORT_IN_USE, e.getMessage());
                }
                throw e;
            }
            OfaCsp csp = new OfaCsp(this, id, isa, evd);
            listeners.put(id.address(), csp);
            evd.users++;
            csps.add(csp);
            counts.opened(HandleType.CSP);
            return csp;
        } finally {
            lock.unlock();
        }
    }

    void freeCsp(OfaCsp csp) {
        lock.lock();
        try {
            if (csp.isFreed()) {
                throw csp.alreadyFreed();
            }
            destroyCsp(csp);
        } finally {
            lock.unlock();
        }
    }

    private void destroyCsp(OfaCsp csp) {
        csp.markFreed();
        csps.remove(csp);
        listeners.remove(csp.id.address());
        quietly("rdma_destroy_id", () -> RdmaCm.get().destroyId(csp.id));
        csp.evd.users--;
        counts.closed(HandleType.CSP);
    }

    /** {@code dat_cr_handoff}: queues the request again at the PSP of {@code connQual}. */
    boolean handoff(OfaCr cr, long connQual) {
        lock.lock();
        try {
            for (OfaPsp p : psps) {
                if (p.connQual == connQual) {
                    OfaCr moved = cr.handedOff();
                    crs.add(moved);
                    counts.opened(HandleType.CR);
                    crByCmId.put(moved.id().address(), moved);
                    p.evd.enqueue(new DatEvent.ConnectionRequest(p.evd, p, address, p.connQual, moved, false));
                    return true;
                }
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    // ---- SRQ ----

    @Override
    public SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes attributes) {
        if (attributes == null) {
            throw DatException.invalidParameter(3, "null SRQ attributes");
        }
        lock.lock();
        try {
            live();
            OfaPz p = ownPz(pz, 2);
            if (device.maxSrq == 0) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "device " + device.name + " has no SRQs");
            }
            if (attributes.maxRecvDtos() > device.maxSrqWr || attributes.maxRecvIov() > device.maxSge) {
                throw DatException.invalidParameter(3, "SRQ size over the device's limits");
            }
            MemorySegment srq;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment init = a.allocate(org.jdapl.provider.ofa.verbs.Structs.IbvSrqInitAttr.S.size(), 8);
                org.jdapl.provider.ofa.verbs.Structs.IbvSrqInitAttr.MAX_WR.setInt(init, attributes.maxRecvDtos());
                org.jdapl.provider.ofa.verbs.Structs.IbvSrqInitAttr.MAX_SGE.setInt(init, attributes.maxRecvIov());
                org.jdapl.provider.ofa.verbs.Structs.IbvSrqInitAttr.SRQ_LIMIT.setInt(init, attributes.lowWatermark());
                srq = Verbs.get().createSrq(p.pd, init);
            } catch (VerbsException e) {
                throw resources(DatReturnSubtype.RESOURCE_SRQ, "dat_srq_create (ibv_create_srq)", e);
            }
            OfaSrq q = new OfaSrq(this, p, srq, attributes.maxRecvDtos(), attributes.maxRecvIov(),
                    attributes.lowWatermark());
            p.users++;
            srqs.add(q);
            counts.opened(HandleType.SRQ);
            return q;
        } finally {
            lock.unlock();
        }
    }

    void freeSrq(OfaSrq srq) {
        lock.lock();
        try {
            if (srq.isFreed()) {
                throw srq.alreadyFreed();
            }
            if (srq.users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_SRQ_IN_USE,
                        "SRQ is used by " + srq.users + " EP(s)");
            }
            destroySrq(srq);
        } finally {
            lock.unlock();
        }
    }

    private void destroySrq(OfaSrq srq) {
        srq.retire();
        srqs.remove(srq);
        quietly("ibv_destroy_srq", () -> Verbs.get().destroySrq(srq.srq));
        srq.freeNative();
        srq.pz.users--;
        counts.closed(HandleType.SRQ);
    }

    // ---- event thread ----

    @Override
    public void completions() {
        Verbs v = Verbs.get();
        while (true) {
            MemorySegment cq = v.getCqEvent(compChannel);
            if (cq.equals(MemorySegment.NULL)) {
                return;
            }
            // Acknowledge before anything else: ibv_destroy_cq waits for it.
            v.ackCqEvents(cq, 1);
            OfaEvd evd = evdByCq.get(cq.address());
            if (evd != null) {
                evd.cqEvent();
            }
        }
    }

    /** One work completion polled from an EVD's CQ, at {@code wc} (poll lock held): handed to the EP it names. */
    void completion(OfaEvd evd, long wc) {
        int qpNum = WorkCompletion.qpNum(wc);
        OfaEp ep = evd.lastEp;
        if (ep == null || ep.qpNum != qpNum || ep.isFreed()) {
            ep = epByQpNum.get(qpNum);
            evd.lastEp = ep;
        }
        if (ep == null) {
            return; // an EP freed with completions still in the CQ
        }
        long wrId = WorkCompletion.wrId(wc);
        if ((wrId & WorkRing.TAG_MASK) == WorkRing.SRQ) {
            srqCompletion(evd, ep, wc, wrId);
            return;
        }
        ep.completed(evd, wc, wrId);
    }

    private static void srqCompletion(OfaEvd evd, OfaEp ep, long wc, long wrId) {
        if (ep.srq != null) {
            long cookie = ep.srq.complete(wrId);
            int status = WorkCompletion.status(wc);
            if (cookie != -1 || status != 0) {
                ep.srqCompleted(evd, cookie, status, WorkCompletion.byteLen(wc), WorkCompletion.invalidatedRkey(wc));
            }
        }
    }

    /** Device events: routed to the IAs of the context (port events) or the EP of the QP (QP events). */
    @Override
    public void asyncEvents() {
        Verbs v = Verbs.get();
        while (v.getAsyncEvent(device.context.pointer(), asyncEvent)) {
            int type = IbvAsyncEvent.EVENT_TYPE.getInt(asyncEvent);
            long element = IbvAsyncEvent.ELEMENT.getLong(asyncEvent);
            String what = v.eventTypeStr(type);
            v.ackAsyncEvent(asyncEvent);
            LOG.debug("IA {}: device event {}", name, what);
            Set<OfaIa> all = BY_CONTEXT.getOrDefault(device.context.pointer().address(), Set.of(this));
            for (OfaIa ia : all) {
                ia.deviceEvent(type, element, what);
            }
        }
    }

    private void deviceEvent(int type, long element, String what) {
        if (isFreed()) {
            return;
        }
        switch (type) {
            case 1, 2, 3 -> { // IBV_EVENT_QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR: that connection is broken
                OfaEp ep = epByQp.get(element);
                if (ep != null) {
                    loop.schedule(0, () -> ep.broken(what));
                }
            }
            case 4 -> { // IBV_EVENT_COMM_EST: data came before the RTU; tell rdma_cm
                OfaEp ep = epByQp.get(element);
                if (ep != null) {
                    LOG.debug("IA {}: communication established on qp {}", name, ep.qpNum);
                }
            }
            case 10 -> { // IBV_EVENT_PORT_ERR: the link is down, every connection of the port is broken
                if ((int) element == device.port) {
                    for (OfaEp ep : List.copyOf(epByQp.values())) {
                        loop.schedule(0, () -> ep.broken("port " + device.port + " down"));
                    }
                    asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_PROVIDER_INTERNAL_ERROR,
                            this, type, what + " (port " + device.port + ")"));
                }
            }
            case 8 -> asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC,
                    this, type, what));
            case 0 -> asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_EVD_OVERFLOW,
                    this, type, what));
            default -> {
                // port active, GID, LID, SM and client events are informational
            }
        }
    }

    /** rdma_cm events: each is copied and acknowledged before it is dispatched (rdma_destroy_id waits for that). */
    @Override
    public void cmEvents() {
        RdmaCm cm = RdmaCm.get();
        RdmaCm.Pending p;
        while ((p = cm.getCmEvent(cmChannel)) != null) {
            RdmaCm.CmEvent e = p.event();
            cm.ack(p);
            try {
                dispatch(e);
            } catch (RuntimeException x) {
                LOG.warn("IA {}: handling rdma_cm event {} failed", name, e.name(), x);
            }
        }
    }

    private void dispatch(RdmaCm.CmEvent e) {
        if (e.event() == RdmaCm.EVENT_CONNECT_REQUEST) {
            connectRequest(e);
            return;
        }
        OfaEp ep = epByCmId.get(e.id().address());
        if (ep != null) {
            ep.cmEvent(e);
            return;
        }
        OfaCr cr = crByCmId.get(e.id().address());
        if (cr != null) {
            if (e.event() != RdmaCm.EVENT_ESTABLISHED && e.event() != RdmaCm.EVENT_TIMEWAIT_EXIT) {
                cr.withdrawn();
            }
            return;
        }
        LOG.debug("IA {}: rdma_cm event {} (status {}) for no object", name, e.name(), e.status());
    }

    /** A connect request at a PSP, RSP or CSP: a CR event on its EVD (an RSP is consumed by it). */
    private void connectRequest(RdmaCm.CmEvent e) {
        RdmaCm cm = RdmaCm.get();
        Object sp = listeners.get(e.listenId().address());
        InetSocketAddress from = RdmaCm.destinationAddress(e.id());
        int localPort = RdmaCm.sourceAddress(e.id()).getPort();
        byte[] data = wire.received(e.privateData());
        if (sp instanceof OfaRsp rsp) {
            lock.lock();
            try {
                OfaEp ep = rsp.ep;
                ep.lock.lock();
                try {
                    if (rsp.isFreed() || ep.isFreed() || ep.state() != EpState.RESERVED) {
                        rejectQuietly(cm, e.id());
                        return;
                    }
                    OfaCr cr = newCr(e, from, localPort, data, ep);
                    ep.pendingCr = cr;
                    ep.setPassiveState(EpState.PASSIVE_CONNECTION_PENDING);
                    destroyRsp(rsp);
                    ep.rsp = null;
                    rsp.evd.enqueue(new DatEvent.ConnectionRequest(rsp.evd, null, address, rsp.connQual, cr, false));
                } finally {
                    ep.lock.unlock();
                }
            } finally {
                lock.unlock();
            }
            return;
        }
        OfaEvd evd;
        long qual;
        org.jdapl.dat.ServicePoint point;
        if (sp instanceof OfaPsp psp && !psp.isFreed()) {
            evd = psp.evd;
            qual = psp.connQual;
            point = psp;
        } else if (sp instanceof OfaCsp csp && !csp.isFreed()) {
            evd = csp.evd;
            qual = csp.address.getPort();
            point = csp;
        } else {
            rejectQuietly(cm, e.id());
            return;
        }
        OfaCr cr = newCr(e, from, localPort, data, null);
        evd.enqueue(new DatEvent.ConnectionRequest(evd, point, address, qual, cr, false));
    }

    private OfaCr newCr(RdmaCm.CmEvent e, InetSocketAddress from, int localPort, byte[] data, OfaEp reserved) {
        OfaCr cr = new OfaCr(this, e.id(), from, localPort, data, e.responderResources(), e.initiatorDepth(),
                reserved);
        crs.add(cr);
        counts.opened(HandleType.CR);
        crByCmId.put(e.id().address(), cr);
        return cr;
    }

    /** Refuses a request nobody takes: a provider reject (NON_PEER_REJECTED at the active side). */
    private void rejectQuietly(RdmaCm cm, MemorySegment id) {
        try {
            cm.reject(id, wire.providerReject());
        } catch (VerbsException x) {
            LOG.debug("rdma_reject failed", x);
        }
        try {
            cm.destroyId(id);
        } catch (VerbsException x) {
            LOG.debug("rdma_destroy_id failed", x);
        }
    }

    private static DatException resources(DatReturnSubtype subtype, String what, VerbsException e) {
        return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, subtype, what + ": " + e.getMessage(), e);
    }

    @Override
    public String toString() {
        return "IA " + name + " on " + device.name + " port " + device.port;
    }
}
