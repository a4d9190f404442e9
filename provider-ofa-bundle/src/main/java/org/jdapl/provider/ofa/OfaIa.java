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
import org.jdapl.provider.ofa.verbs.Structs.IbvQp;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpCap;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpInitAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvMr;
import org.jdapl.provider.ofa.verbs.Structs.IbvMw;
import org.jdapl.provider.ofa.verbs.Structs.IbvWc;
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
    /** rdma_cm's limit on private data of a connect request over RC (56 bytes for IB CM REQ). */
    static final int MAX_PRIVATE_DATA = 56;
    private static final int POLL_BATCH = 16;

    private final OfaProvider provider;
    private final String name;
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
    private final Set<OfaRmr> rmrs = new LinkedHashSet<>();
    private final Set<OfaEp> eps = new LinkedHashSet<>();
    private final Set<OfaPsp> psps = new LinkedHashSet<>();
    /** CQ address to EVD, for completion events. Guarded by {@link #lock}. */
    private final Map<Long, OfaEvd> evdByCq = new HashMap<>();
    /** A CQ for EPs created without a receive or request EVD (created on first need). */
    private MemorySegment nullCq = MemorySegment.NULL;
    /** Native buffers of the event thread, freed at close. */
    private final Arena buffers = Arena.ofShared();
    private final MemorySegment wcs = buffers.allocate(IbvWc.S.size() * POLL_BATCH, 8);
    private final MemorySegment asyncEvent = buffers.allocate(IbvAsyncEvent.S.size(), 8);

    OfaIa(OfaProvider provider, String name, OfaDevice device, int asyncEvdMinQlen, ObjectCounts counts) {
        super(HandleType.IA);
        this.provider = provider;
        this.name = name;
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
                d.maxMrSize, d.maxPd, d.maxMsgSize, d.maxMsgSize, d.maxMw, 0, 0, MAX_PRIVATE_DATA,
                Verbs.get().hasRegMrIova(), d.specific());
    }

    private ProviderAttributes providerAttributes() {
        String[] ver = OfaProvider.VERSION.split("\\.");
        Map<String, String> specific = new HashMap<>();
        specific.put("connections", "not supported in this version");
        specific.put("libibverbs", Verbs.SONAME);
        specific.put("librdmacm", RdmaCm.unavailableReason() == null ? RdmaCm.SONAME : RdmaCm.unavailableReason());
        return new ProviderAttributes(OfaProvider.NAME, Integer.parseInt(ver[0]), Integer.parseInt(ver[1]),
                Dat.VERSION_MAJOR, Dat.VERSION_MINOR, true, Set.of(Qos.BEST_EFFORT),
                EnumSet.noneOf(CompletionFlag.class), false, MAX_PRIVATE_DATA, 64, true, false, specific);
    }

    private static String vendor(int vendorId) {
        return switch (vendorId) {
            case 0x02c9 -> "Mellanox";
            case 0x1077 -> "QLogic";
            case 0x8086 -> "Intel";
            case 0x14e4 -> "Broadcom";
            case 0x15b3 -> "Mellanox";
            case 0 -> "none (software device)";
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
                        + psps.size();
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
        for (OfaEp e : List.copyOf(eps)) {
            destroyEp(e);
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
                evd.cq = cq;
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
            MemorySegment cq = evd.cq;
            evd.cq = MemorySegment.NULL;
            // Waits until the event thread has acknowledged the CQ's events; it acks before taking the lock.
            quietly("ibv_destroy_cq", () -> Verbs.get().destroyCq(cq));
        }
        evd.closed();
        counts.closed(HandleType.EVD);
    }

    void resizeCq(OfaEvd evd, int qlen) {
        lock.lock();
        try {
            if (!evd.cq.equals(MemorySegment.NULL)) {
                try {
                    Verbs.get().resizeCq(evd.cq, qlen);
                } catch (VerbsException e) {
                    throw resources(DatReturnSubtype.RESOURCE_TEVD, "dat_evd_resize", e);
                }
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

    void freeLmr(OfaLmr lmr) {
        lock.lock();
        try {
            if (lmr.isFreed()) {
                throw lmr.alreadyFreed();
            }
            if (lmr.boundRmrs > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_LMR_IN_USE,
                        "LMR has " + lmr.boundRmrs + " bound RMR(s)");
            }
            destroyLmr(lmr);
        } finally {
            lock.unlock();
        }
    }

    private void destroyLmr(OfaLmr lmr) {
        lmr.markFreed();
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
     * {@code dat_rmr_bind}: checks the handles, bounds and privileges; a bind is a work request on
     * the EP's queue pair and so needs a CONNECTED EP, which this version cannot establish.
     */
    int bindRmr(OfaRmr rmr, LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges, VaType va,
                Endpoint ep) {
        lock.lock();
        try {
            rmr.live();
            if (!(ep instanceof OfaEp e) || e.ia != this || e.isFreed()) {
                throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_EP, "not a live EP of IA " + name);
            }
            if (length != 0) {
                if (!(lmr instanceof OfaLmr l) || l.ia != this || l.isFreed()) {
                    throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_LMR,
                            "not a live LMR of IA " + name);
                }
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
            }
            throw e.state().invalid("dat_rmr_bind (a memory window bind is posted on a connected EP)");
        } finally {
            lock.unlock();
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
        if (rmr.boundLmr != null) {
            rmr.boundLmr.boundRmrs--;
            rmr.boundLmr = null;
        }
        rmr.pz.users--;
        quietly("ibv_dealloc_mw", () -> device.context.deallocMw(rmr.mw));
        counts.closed(HandleType.RMR);
    }

    // ---- EP ----

    @Override
    public Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, EpAttributes attributes) {
        EpAttributes attrs = attributes == null ? defaultEpAttributes() : attributes;
        lock.lock();
        try {
            live();
            OfaPz p = ownPz(pz, 2);
            OfaEvd recv = ownEvd(recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV, EvdFlag.DTO);
            OfaEvd request = ownEvd(requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST, EvdFlag.DTO);
            OfaEvd connect = ownEvd(connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN, EvdFlag.CONNECTION);
            checkEpAttributes(attrs);
            Verbs v = Verbs.get();
            MemorySegment qp;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment init = a.allocate(IbvQpInitAttr.S.size(), 8);
                IbvQpInitAttr.SEND_CQ.setPointer(init, request != null ? request.cq : nullCq());
                IbvQpInitAttr.RECV_CQ.setPointer(init, recv != null ? recv.cq : nullCq());
                MemorySegment cap = IbvQpInitAttr.CAP.slice(init, IbvQpCap.S.size());
                IbvQpCap.MAX_SEND_WR.setInt(cap, attrs.maxRequestDtos());
                IbvQpCap.MAX_RECV_WR.setInt(cap, Math.max(1, attrs.maxRecvDtos()));
                IbvQpCap.MAX_SEND_SGE.setInt(cap, attrs.maxRequestIov());
                IbvQpCap.MAX_RECV_SGE.setInt(cap, attrs.maxRecvIov());
                IbvQpInitAttr.QP_TYPE.setInt(init, Verbs.QPT_RC);
                qp = v.createQp(p.pd, init).reinterpret(IbvQp.S.size());
            } catch (VerbsException e) {
                throw resources(DatReturnSubtype.RESOURCE_TEP, "dat_ep_create (ibv_create_qp)", e);
            }
            OfaEp ep = new OfaEp(this, p, qp, IbvQp.QP_NUM.getInt(qp), recv, request, connect, attrs);
            p.users++;
            for (OfaEvd e : new OfaEvd[] {recv, request, connect}) {
                if (e != null) {
                    e.users++;
                }
            }
            eps.add(ep);
            counts.opened(HandleType.EP);
            return ep;
        } finally {
            lock.unlock();
        }
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

    @Override
    public Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                                    EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_ep_create_with_srq: the ofa provider has no shared receive queues yet");
    }

    void freeEp(OfaEp ep) {
        lock.lock();
        try {
            if (ep.isFreed()) {
                throw ep.alreadyFreed();
            }
            destroyEp(ep);
        } finally {
            lock.unlock();
        }
    }

    private void destroyEp(OfaEp ep) {
        ep.markFreed();
        eps.remove(ep);
        quietly("ibv_destroy_qp", () -> Verbs.get().destroyQp(ep.qp));
        ep.pz.users--;
        for (OfaEvd e : new OfaEvd[] {ep.recvEvd, ep.requestEvd, ep.connectEvd}) {
            if (e != null) {
                e.users--;
            }
        }
        counts.closed(HandleType.EP);
    }

    // ---- service points ----

    @Override
    public PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag) {
        if (connQual < 1 || connQual > 0xffff) {
            throw DatException.invalidParameter(2,
                    "connection qualifier " + connQual + " is outside 1..65535 (rdma_cm TCP port space)");
        }
        return listen(connQual, crEvd, flag);
    }

    @Override
    public PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag) {
        return listen(0, crEvd, flag);
    }

    private PublicServicePoint listen(long connQual, EventDispatcher crEvd, PspFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(4, "null PSP flag");
        }
        lock.lock();
        try {
            live();
            OfaEvd evd = ownEvd(crEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CR, null);
            if (evd == null || !evd.flags().contains(EvdFlag.CR)) {
                throw DatException.invalidParameter(3, "the PSP's EVD must have the CR stream");
            }
            if (flag == PspFlag.PROVIDER) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                        "PSPs that create the EP (DAT_PSP_PROVIDER_FLAG) are not supported");
            }
            if (cmChannel.equals(MemorySegment.NULL)) {
                throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                        "service points need rdma_cm: " + RdmaCm.unavailableReason());
            }
            RdmaCm cm = RdmaCm.get();
            MemorySegment id;
            try {
                id = cm.createId(cmChannel);
            } catch (VerbsException e) {
                throw resources(DatReturnSubtype.NO_SUBTYPE, "dat_psp_create (rdma_create_id)", e);
            }
            long qual;
            try {
                cm.bindAddr(id, new InetSocketAddress(address.getAddress(), (int) connQual));
                cm.listen(id, 64);
                qual = RdmaCm.sourceAddress(id).getPort();
            } catch (VerbsException e) {
                cm.destroyId(id);
                if (e.errno() == Errno.EADDRINUSE) {
                    throw connQual == 0
                            ? new DatException(DatReturnType.CONN_QUAL_UNAVAILABLE, DatReturnSubtype.NO_SUBTYPE, "no free connection qualifier", e)
                            : new DatException(DatReturnType.CONN_QUAL_IN_USE, DatReturnSubtype.NO_SUBTYPE,
                                    "connection qualifier " + connQual + " is in use on " + address, e);
                }
                throw resources(DatReturnSubtype.NO_SUBTYPE, "dat_psp_create (rdma_bind_addr/rdma_listen)", e);
            }
            OfaPsp psp = new OfaPsp(this, id, qual, evd, flag);
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
        // Waits for the ID's events to be acknowledged; the event thread acks without the lock.
        quietly("rdma_destroy_id", () -> RdmaCm.get().destroyId(psp.id));
        psp.evd.users--;
        counts.closed(HandleType.PSP);
    }

    @Override
    public ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_rsp_create: " + OfaEp.NO_CONNECTIONS);
    }

    @Override
    public CommonServicePoint createCsp(SocketAddress cspAddress, EventDispatcher crEvd) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_csp_create: " + OfaEp.NO_CONNECTIONS);
    }

    @Override
    public SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes attributes) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_srq_create: the ofa provider has no shared receive queues yet");
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
            // Acknowledge before taking the lock: ibv_destroy_cq (under the lock) waits for it.
            v.ackCqEvents(cq, 1);
            lock.lock();
            try {
                OfaEvd evd = evdByCq.get(cq.address());
                if (evd != null) {
                    device.context.reqNotifyCq(evd.cq, false);
                    drain(evd);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Polls a CQ empty. No work request is posted by this version, so any completion is reported as an error. */
    private void drain(OfaEvd evd) {
        int n;
        while ((n = device.context.pollCq(evd.cq, POLL_BATCH, wcs)) > 0) {
            for (int i = 0; i < n; i++) {
                MemorySegment wc = wcs.asSlice(i * IbvWc.S.size(), IbvWc.S.size());
                asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, EventNumber.ASYNC_ERROR_PROVIDER_INTERNAL_ERROR,
                        evd, 0, "completion of a work request the provider did not post (wr_id "
                        + IbvWc.WR_ID.getLong(wc) + ", status " + Verbs.get().wcStatusStr(IbvWc.STATUS.getInt(wc))
                        + ")"));
            }
        }
    }

    @Override
    public void asyncEvents() {
        Verbs v = Verbs.get();
        while (v.getAsyncEvent(device.context.pointer(), asyncEvent)) {
            int type = IbvAsyncEvent.EVENT_TYPE.getInt(asyncEvent);
            String what = v.eventTypeStr(type);
            v.ackAsyncEvent(asyncEvent);
            LOG.info("IA {}: device event {}", name, what);
            EventNumber number = switch (type) {
                case 8 -> EventNumber.ASYNC_ERROR_IA_CATASTROPHIC; // IBV_EVENT_DEVICE_FATAL
                case 0 -> EventNumber.ASYNC_ERROR_EVD_OVERFLOW; // IBV_EVENT_CQ_ERR
                case 1, 2, 3, 4, 5 -> EventNumber.ASYNC_ERROR_EP_BROKEN; // QP fatal, req/access errors, path mig
                default -> null; // port, GID, LID, SM and client events are informational
            };
            if (number != null) {
                asyncEvd.enqueue(new DatEvent.AsyncError(asyncEvd, number, this, type, what));
            }
        }
    }

    @Override
    public void cmEvents() {
        RdmaCm cm = RdmaCm.get();
        RdmaCm.Pending p;
        while ((p = cm.getCmEvent(cmChannel)) != null) {
            RdmaCm.CmEvent e = p.event();
            if (e.event() == RdmaCm.EVENT_CONNECT_REQUEST) {
                LOG.info("IA {}: rejecting a connection request ({})", name, OfaEp.NO_CONNECTIONS);
                try {
                    cm.reject(e.id());
                } catch (VerbsException x) {
                    LOG.warn("IA {}: rdma_reject failed", name, x);
                }
                cm.ack(p);
                cm.destroyId(e.id());
            } else {
                cm.ack(p);
                LOG.debug("IA {}: rdma_cm event {} (status {})", name, e.name(), e.status());
            }
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
