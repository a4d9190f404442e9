package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Structs.IbvMr;
import org.jdapl.provider.ofa.verbs.Structs.IbvMw;
import org.jdapl.provider.ofa.verbs.Structs.IbvMwBind;
import org.jdapl.provider.ofa.verbs.Structs.IbvMwBindInfo;
import org.jdapl.provider.ofa.verbs.Structs.IbvSendWr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * An RMR, in one of two forms:
 * <ul>
 * <li>a <b>memory window</b> of the device ({@code ibv_alloc_mw}): type 1 for PZ scope
 * ({@code dat_rmr_create}), bound with {@code ibv_bind_mw}; type 2 for EP scope
 * ({@code dat_rmr_create_for_ep}), bound with an {@code IBV_WR_BIND_MW} work request and unbound with
 * {@code IBV_WR_LOCAL_INV}. The bind goes on the EP's send queue ({@link SendQueue#bindWindow}) and
 * completes as an RMR bind event from the CQ.</li>
 * <li>a <b>registration of its own</b> where the device's windows cannot be trusted (rdma_rxe checks
 * an access against the whole MR, not the window: {@link OfaDevice#windowsRefused}) or do not exist:
 * each bind registers exactly the bound range ({@code ibv_reg_mr} of the LMR's bytes from the offset,
 * with the bind's privileges), so the device itself enforces the bounds and rights of the RMR
 * (LMR_06); the rmr_context is that registration's rkey, an unbind or a new bind deregisters it. The
 * bind completes at once, and its event is queued on the EP's request EVD.</li>
 * </ul>
 * An LMR with a bound RMR cannot be freed, nor a PZ with an RMR; a bind on an EP
 * that is not CONNECTED fails INVALID_STATE.
 *
 * <p>Behaviours: OBJ_02, DISC_07, LMR_01, LMR_06.
 */
final class OfaRmr extends OfaHandle implements RemoteMemoryRegion, IaObjects.Owned {
    final OfaIa ia;
    /** The IA's device, lock and registry of objects, given at creation. */
    private final OfaDevice device;
    private final ReentrantLock iaLock;
    private final IaObjects objects;
    final OfaPz pz;
    /** The device's memory window, or NULL for an RMR backed by a registration of its own. */
    final MemorySegment mw;
    final RmrScope scope;
    /** The LMR it is bound to, or null. Guarded by this object's monitor. */
    OfaLmr boundLmr;
    long boundOffset;
    long boundLength;
    Set<MemPriv> boundPrivileges = Set.of();
    int rmrContext;
    VaType vaType = VaType.VA;
    /** The window's current rkey (type 2 windows: the one of the last bind). Guarded by the EP's lock. */
    int windowKey;
    /** The key the bind being posted gives the window. Guarded by the EP's lock. */
    private int postedKey;
    /** The registration of the bound range (registration-backed RMRs), or NULL. Guarded by the IA lock. */
    private MemorySegment rangeMr = MemorySegment.NULL;

    private OfaRmr(OfaIa ia, OfaDevice device, ReentrantLock iaLock, IaObjects objects, OfaPz pz, MemorySegment mw,
                   RmrScope scope) {
        super(HandleType.RMR);
        this.ia = ia;
        this.device = device;
        this.iaLock = iaLock;
        this.objects = objects;
        this.pz = pz;
        this.mw = mw;
        this.scope = scope;
        this.windowKey = mw.equals(MemorySegment.NULL) ? 0 : IbvMw.RKEY.getInt(mw);
    }

    /** {@code dat_rmr_create} (PZ scope) and {@code dat_rmr_create_for_ep} (EP scope). */
    static OfaRmr create(OfaPz pz, RmrScope scope) {
        OfaIa ia = pz.ia;
        return ia.locked(() -> {
            pz.live();
            OfaDevice device = ia.device();
            int type = scope == RmrScope.PZ ? 1 : 2;
            boolean window = type == 1 ? device.hasMwType1() : device.hasMwType2();
            MemorySegment mw = MemorySegment.NULL;
            if (window) {
                try {
                    mw = device.context.allocMw(pz.pd, type).reinterpret(IbvMw.S.size());
                } catch (VerbsException e) {
                    if (e.errno() != Errno.EOPNOTSUPP) {
                        throw NativeErrors.resources(DatReturnSubtype.RESOURCE_MEMORY_REGION, "dat_rmr_create (ibv_alloc_mw)",
                                e);
                    }
                    // A device that lists windows and refuses them: registrations of their own.
                }
            }
            OfaRmr rmr = new OfaRmr(ia, device, ia.lock(), ia.objects(), pz, mw, scope);
            pz.users++;
            rmr.objects.add(HandleType.RMR, rmr);
            return rmr;
        });
    }

    boolean isWindow() {
        return !mw.equals(MemorySegment.NULL);
    }

    @Override
    public RmrParam query() {
        live();
        synchronized (this) {
            return new RmrParam(ia, pz, boundLmr, boundOffset, boundLength, boundPrivileges, rmrContext, scope,
                    vaType);
        }
    }

    /**
     * {@code dat_rmr_bind}: checks the handles, bounds and privileges, then binds through the EP's
     * send queue (a window) or registers the range (a registration of its own). The RMR is bound at
     * once, and unbound again if a window's bind completes in error.
     */
    @Override
    public int bind(LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges, VaType va,
                    Endpoint ep, long cookie, Set<CompletionFlag> flags) {
        OfaEp e;
        OfaLmr l = null;
        iaLock.lock();
        try {
            live();
            e = ia.ownEp(ep);
            if (length != 0) {
                if (!(lmr instanceof OfaLmr y) || y.ia != ia || y.isFreed()) {
                    throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_LMR,
                            "not a live LMR of IA " + ia.name());
                }
                l = y;
                if (offset < 0 || length < 0 || offset + length > l.segment().byteSize()) {
                    throw DatException.invalidParameter(3, "bind range exceeds the LMR");
                }
                if (l.pz != pz || e.pz() != pz) {
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
            if (!isWindow()) {
                int context = bindRange(e, l, offset, length, privileges, cookie, flags);
                bound(l, offset, length, privileges, va, context);
                return context;
            }
        } finally {
            iaLock.unlock();
        }
        int context = e.bindWindow(this, l, offset, length, remoteAccess(privileges), cookie, flags);
        bound(l, offset, length, privileges, va, context);
        return context;
    }

    private int remoteAccess(Set<MemPriv> privileges) {
        int access = 0;
        if (privileges != null && privileges.contains(MemPriv.REMOTE_READ)) {
            access |= Verbs.ACCESS_REMOTE_READ;
        }
        if (privileges != null && privileges.contains(MemPriv.REMOTE_WRITE)) {
            access |= Verbs.ACCESS_REMOTE_WRITE;
        }
        if (privileges != null && privileges.contains(MemPriv.REMOTE_ATOMIC) && device.atomicCap != 0) {
            access |= Verbs.ACCESS_REMOTE_ATOMIC;
        }
        return access;
    }

    private synchronized void bound(OfaLmr l, long offset, long length, Set<MemPriv> privileges, VaType va,
                                    int context) {
        if (boundLmr != null) {
            boundLmr.boundRmrs.decrementAndGet();
        }
        boundLmr = l;
        if (l != null) {
            l.boundRmrs.incrementAndGet();
        }
        boundOffset = length == 0 ? 0 : offset;
        boundLength = length;
        boundPrivileges = length == 0 || privileges == null ? Set.of() : Set.copyOf(privileges);
        rmrContext = context;
        vaType = va == null ? VaType.VA : va;
    }

    /**
     * A bind of a registration-backed RMR (IA lock held): the EP must be CONNECTED with a request
     * EVD, as for a window; the new range is registered before the old one is deregistered, so a
     * failed bind leaves the RMR as it was. The bind event is queued at once.
     */
    private int bindRange(OfaEp e, OfaLmr l, long offset, long length, Set<MemPriv> privileges, long cookie,
                          Set<CompletionFlag> flags) {
        OfaEvd evd = e.checkBindable();
        MemorySegment old = rangeMr;
        int context = 0;
        if (length > 0) {
            int access = remoteAccess(privileges);
            if ((access & (Verbs.ACCESS_REMOTE_WRITE | Verbs.ACCESS_REMOTE_ATOMIC)) != 0) {
                access |= Verbs.ACCESS_LOCAL_WRITE; // ibv_reg_mr requires it with remote write or atomics
            }
            MemorySegment mr;
            try {
                mr = Verbs.get().regMr(pz.pd, l.segment().asSlice(offset, length), length, access)
                        .reinterpret(IbvMr.S.size());
            } catch (VerbsException x) {
                throw NativeErrors.resources(DatReturnSubtype.RESOURCE_MEMORY_REGION, "dat_rmr_bind (ibv_reg_mr of the range)",
                        x);
            }
            rangeMr = mr;
            context = IbvMr.RKEY.getInt(mr);
        } else {
            rangeMr = MemorySegment.NULL;
        }
        if (!old.equals(MemorySegment.NULL)) {
            NativeErrors.quietly("ibv_dereg_mr", () -> Verbs.get().deregMr(old));
        }
        if (flags == null || !flags.contains(CompletionFlag.SUPPRESS)) {
            evd.enqueue(new DatEvent.RmrBindCompletion(evd, this, cookie, DtoStatus.SUCCESS));
        }
        return context;
    }

    /**
     * Writes and posts the bind of a window (EP lock held; {@code wrId} names the send ring's entry):
     * {@code ibv_bind_mw} for type 1, an {@code IBV_WR_BIND_MW} or {@code IBV_WR_LOCAL_INV} work
     * request in {@code sendWr} for type 2. Returns the errno of the post (0: posted).
     */
    int postBind(QueuePair qp, MemorySegment mwBind, MemorySegment sendWr, long badWrArg, long wrId, OfaLmr lmr,
                 OfaLmr previous, long offset, long length, int access) {
        if (scope == RmrScope.PZ) {
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
            int r = device.context.bindMw(qp.qp(), mw, mwBind);
            postedKey = IbvMw.RKEY.getInt(mw);
            return r;
        }
        sendWr.fill((byte) 0);
        IbvSendWr.WR_ID.setLong(sendWr, wrId);
        IbvSendWr.SEND_FLAGS.setInt(sendWr, Verbs.SEND_SIGNALED);
        if (length > 0) {
            postedKey = (windowKey & ~0xff) | ((windowKey + 1) & 0xff);
            IbvSendWr.OPCODE.setInt(sendWr, Verbs.WR_BIND_MW);
            IbvSendWr.BIND_MW_MW.setPointer(sendWr, mw);
            IbvSendWr.BIND_MW_RKEY.setInt(sendWr, postedKey);
            MemorySegment info = IbvSendWr.BIND_MW_INFO.slice(sendWr, IbvMwBindInfo.S.size());
            IbvMwBindInfo.MR.setPointer(info, lmr.mr);
            IbvMwBindInfo.ADDR.setLong(info, lmr.segment().address() + offset);
            IbvMwBindInfo.LENGTH.setLong(info, length);
            IbvMwBindInfo.MW_ACCESS_FLAGS.setInt(info, access);
        } else {
            postedKey = windowKey;
            IbvSendWr.OPCODE.setInt(sendWr, Verbs.WR_LOCAL_INV);
            IbvSendWr.INVALIDATE_RKEY.setInt(sendWr, windowKey);
        }
        return device.context.postSend(qp.address(), sendWr.address(), badWrArg);
    }

    /** The bind {@link #postBind} posted is on the queue: its key is the window's (EP lock held). */
    int posted() {
        windowKey = postedKey;
        return postedKey;
    }

    /** A bind completed in error, or the RMR goes: it is not bound. */
    synchronized void bindFailed() {
        if (boundLmr != null) {
            boundLmr.boundRmrs.decrementAndGet();
            boundLmr = null;
        }
        boundLength = 0;
        rmrContext = 0;
    }

    @Override
    public void free() {
        ia.free(this);
    }

    /** Unbinds and frees the window or the range's registration (IA lock held). */
    @Override
    public void destroy() {
        if (objects.release(this)) {
            pz.users--;
        }
        bindFailed();
        if (isWindow()) {
            NativeErrors.quietly("ibv_dealloc_mw", () -> device.context.deallocMw(mw));
        } else if (!rangeMr.equals(MemorySegment.NULL)) {
            MemorySegment mr = rangeMr;
            rangeMr = MemorySegment.NULL;
            NativeErrors.quietly("ibv_dereg_mr", () -> Verbs.get().deregMr(mr));
        }
    }
}
