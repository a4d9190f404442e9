package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqState;
import org.jdapl.provider.ofa.verbs.Structs.IbvRecvWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.Structs.IbvSrqAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSrqInitAttr;
import org.jdapl.provider.ofa.verbs.Verbs;

/**
 * An SRQ: an {@code ibv_srq} whose receives ({@code ibv_post_srq_recv} through
 * {@code ibv_context.ops}) any EP created on it consumes; the completion arrives on that EP's receive
 * EVD. Receives are tracked by slot, since EPs consume them in any order. Receives still posted when
 * the SRQ is freed (no EP uses it then) are dropped with the queue, as verbs do.
 *
 * <p>The low watermark (the attribute at creation, or {@code dat_srq_set_lw}; 0 is none) is the
 * {@code ibv_srq}'s limit: the device raises IBV_EVENT_SRQ_LIMIT_REACHED once when fewer receives
 * than the limit remain and disarms it, and the IA's router makes it an
 * {@link EventNumber#ASYNC_SRQ_LOW_WATERMARK} event with this SRQ and
 * {@link Dat#SRQ_LOW_WATERMARK_EVENT} on the IA's asynchronous EVD ({@link #limitReached}). A
 * watermark set above the receives already posted raises the event at once, as
 * {@code dat_srq_set_lw(3DAT)} asks (a device only checks its limit when it takes a receive).
 *
 * <p>Behaviours: SRQ_01, SRQ_02, SRQ_03.
 */
final class OfaSrq extends OfaHandle implements SharedReceiveQueue, IaObjects.Owned {
    private static final int IBV_SRQ_LIMIT = 2;

    final OfaIa ia;
    final OfaPz pz;
    final MemorySegment srq;
    final int maxRecvDtos;
    final int maxRecvIov;
    private final ReentrantLock lock = new ReentrantLock();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment wr;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    /** The addresses of {@link #wr} and {@link #badWr}, as the data-path downcalls take them. */
    private final long wrArg;
    private final long badWrArg;
    private final long[] cookies;
    private final int[] free;
    private int freeCount;
    private int lowWatermark;
    /** Whether the low watermark event is still to be raised for the current setting. */
    private boolean lowWatermarkArmed;
    /** EPs created on the SRQ. Guarded by the IA lock. */
    int users;

    /** {@code dat_srq_create}: an {@code ibv_srq} in the PZ. */
    static OfaSrq create(OfaIa ia, org.jdapl.dat.ProtectionZone pz, org.jdapl.dat.SrqAttributes attributes) {
        if (attributes == null) {
            throw DatException.invalidParameter(3, "null SRQ attributes");
        }
        return ia.locked(() -> {
            OfaPz p = ia.ownPz(pz, 2);
            OfaDevice device = ia.device();
            if (device.maxSrq == 0) {
                throw new DatException(org.jdapl.dat.DatReturnType.MODEL_NOT_SUPPORTED, "device " + device.name
                        + " has no SRQs");
            }
            if (attributes.maxRecvDtos() > device.maxSrqWr || attributes.maxRecvIov() > device.maxSge) {
                throw DatException.invalidParameter(3, "SRQ size over the device's limits");
            }
            MemorySegment srq;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment init = a.allocate(IbvSrqInitAttr.S.size(), 8);
                IbvSrqInitAttr.MAX_WR.setInt(init, attributes.maxRecvDtos());
                IbvSrqInitAttr.MAX_SGE.setInt(init, attributes.maxRecvIov());
                IbvSrqInitAttr.SRQ_LIMIT.setInt(init, attributes.lowWatermark());
                srq = Verbs.get().createSrq(p.pd, init);
            } catch (org.jdapl.provider.ofa.verbs.VerbsException e) {
                throw NativeErrors.resources(DatReturnSubtype.RESOURCE_SRQ, "dat_srq_create (ibv_create_srq)", e);
            }
            OfaSrq q = new OfaSrq(ia, p, srq, attributes.maxRecvDtos(), attributes.maxRecvIov(),
                    attributes.lowWatermark());
            p.users++;
            ia.objects().add(HandleType.SRQ, q);
            ia.router().addSrq(srq, q::limitReached);
            if (attributes.lowWatermark() > 0) {
                // Some devices ignore the limit of ibv_create_srq: armed again as dat_srq_set_lw arms it,
                // to fire when an EP takes a receive (the SRQ starts empty: no event at creation).
                try {
                    q.arm(attributes.lowWatermark());
                } catch (DatException e) {
                    q.destroy();
                    throw e;
                }
            }
            return q;
        });
    }

    private OfaSrq(OfaIa ia, OfaPz pz, MemorySegment srq, int maxRecvDtos, int maxRecvIov, int lowWatermark) {
        super(HandleType.SRQ);
        this.ia = ia;
        this.pz = pz;
        this.srq = srq;
        this.maxRecvDtos = maxRecvDtos;
        this.maxRecvIov = maxRecvIov;
        this.lowWatermark = lowWatermark;
        wr = arena.allocate(IbvRecvWr.S.size(), 8);
        sges = arena.allocate(IbvSge.S.size() * (long) maxRecvIov, 8);
        badWr = arena.allocate(8, 8);
        wrArg = wr.address();
        badWrArg = badWr.address();
        cookies = new long[maxRecvDtos];
        free = new int[maxRecvDtos];
        for (int i = 0; i < maxRecvDtos; i++) {
            free[i] = maxRecvDtos - 1 - i;
        }
        freeCount = maxRecvDtos;
    }

    @Override
    public SrqParam query() {
        live();
        lock.lock();
        try {
            return new SrqParam(ia, SrqState.OPERATIONAL, pz, maxRecvDtos, maxRecvIov, lowWatermark,
                    maxRecvDtos - freeCount, 0);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void free() {
        ia.free(this, () -> {
            if (users > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_SRQ_IN_USE,
                        "SRQ is used by " + users + " EP(s)");
            }
        });
    }

    /** Destroys the {@code ibv_srq}; receives still posted go with it, as verbs do (IA lock held). */
    @Override
    public void destroy() {
        retire();
        ia.router().removeSrq(srq);
        if (ia.objects().remove(HandleType.SRQ, this)) {
            pz.users--;
        }
        NativeErrors.quietly("ibv_destroy_srq", () -> Verbs.get().destroySrq(srq));
        arena.close();
    }

    /** {@code dat_srq_post_recv}. */
    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie) {
        live();
        if (iov == null || iov.size() > maxRecvIov) {
            throw DatException.invalidParameter(2, "null segment list or more than " + maxRecvIov + " segments");
        }
        lock.lock();
        try {
            live();
            if (freeCount == 0) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_SRQ,
                        "the SRQ holds " + maxRecvDtos + " receives");
            }
            int n = iov.size();
            for (int i = 0; i < n; i++) {
                LmrTriplet t = iov.get(i);
                MemorySegment sge = sges.asSlice((long) i * IbvSge.S.size(), IbvSge.S.size());
                if (t.length() == 0) {
                    IbvSge.LENGTH.setInt(sge, 0);
                    continue;
                }
                if (!(t.lmr() instanceof OfaLmr l) || l.ia != ia || l.pz != pz
                        || t.offset() + t.length() > l.segment().byteSize()) {
                    throw new DatException(DatReturnType.PROTECTION_VIOLATION,
                            "segment " + i + " names no range of an LMR of the SRQ's PZ");
                }
                IbvSge.ADDR.setLong(sge, l.segment().address() + t.offset());
                IbvSge.LENGTH.setInt(sge, (int) t.length());
                IbvSge.LKEY.setInt(sge, l.lkey());
            }
            int slot = free[freeCount - 1];
            IbvRecvWr.WR_ID.setLong(wr, WorkRing.SRQ | slot);
            IbvRecvWr.NEXT.setLong(wr, 0);
            IbvRecvWr.SG_LIST.setPointer(wr, sges);
            IbvRecvWr.NUM_SGE.setInt(wr, n);
            int r = ia.device().context.postSrqRecv(srq.address(), wrArg, badWrArg);
            if (r != 0) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_SRQ,
                        "ibv_post_srq_recv failed: errno " + r);
            }
            freeCount--;
            cookies[slot] = cookie;
        } finally {
            lock.unlock();
        }
    }

    /** The cookie of a completed receive's wr_id, freeing its slot; -1 if the wr_id is not outstanding. */
    long complete(long wrId) {
        int slot = (int) (wrId & 0xffffffL);
        lock.lock();
        try {
            if (slot >= maxRecvDtos) {
                return -1;
            }
            free[freeCount++] = slot;
            return cookies[slot];
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void resize(int newMax) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                "dat_srq_resize: rdma_rxe and most verbs devices cannot resize an SRQ (IBV_SRQ_MAX_WR)");
    }

    /**
     * {@code dat_srq_set_lw}: {@code ibv_modify_srq} with IBV_SRQ_LIMIT arms the device's limit event
     * (0 disarms it). If fewer receives than {@code lw} are posted already, the event is raised now
     * and the device's limit stays disarmed.
     *
     * <p>Behaviours: SRQ_02.
     */
    @Override
    public void setLowWatermark(int lw) {
        live();
        if (lw < 0 || lw > maxRecvDtos) {
            throw DatException.invalidParameter(2, "low watermark " + lw + " outside 0.." + maxRecvDtos);
        }
        lock.lock();
        try {
            live();
            int posted = maxRecvDtos - freeCount;
            boolean below = lw > 0 && posted < lw;
            modifyLimit(below ? 0 : lw);
            lowWatermark = lw;
            lowWatermarkArmed = lw > 0;
            if (below) {
                raise(posted);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Arms the low watermark of the attributes at creation (IA lock held). */
    private void arm(int lw) {
        lock.lock();
        try {
            modifyLimit(lw);
            lowWatermarkArmed = true;
        } finally {
            lock.unlock();
        }
    }

    private void modifyLimit(int limit) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvSrqAttr.S.size(), 8);
            IbvSrqAttr.SRQ_LIMIT.setInt(attr, limit);
            Verbs.get().modifySrq(srq, attr, IBV_SRQ_LIMIT);
        } catch (org.jdapl.provider.ofa.verbs.VerbsException e) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, DatReturnSubtype.NO_SUBTYPE,
                    "dat_srq_set_lw: ibv_modify_srq with IBV_SRQ_LIMIT " + limit + " failed: " + e.getMessage(), e);
        }
    }

    /** IBV_EVENT_SRQ_LIMIT_REACHED (event thread): the low watermark event, once per setting. Behaviours: SRQ_01. */
    void limitReached() {
        lock.lock();
        try {
            if (!isFreed()) {
                raise(maxRecvDtos - freeCount);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Raises the low watermark event if it is armed, and disarms it (lock held). */
    private void raise(int posted) {
        if (!lowWatermarkArmed) {
            return;
        }
        lowWatermarkArmed = false;
        OfaEvd async = ia.asyncEvd();
        async.enqueue(new DatEvent.AsyncError(async, EventNumber.ASYNC_SRQ_LOW_WATERMARK, this,
                Dat.SRQ_LOW_WATERMARK_EVENT, "fewer receives on the SRQ than its low watermark " + lowWatermark
                + " (" + posted + " posted and not completed)"));
    }

    /** Marks the SRQ freed under its lock, so that no post is between its check and its downcall. */
    void retire() {
        lock.lock();
        try {
            markFreed();
        } finally {
            lock.unlock();
        }
    }
}
