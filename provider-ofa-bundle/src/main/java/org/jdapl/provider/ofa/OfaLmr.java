package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Structs.IbvMr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * An LMR: an {@code ibv_mr} over a native segment the consumer owns ({@code ibv_reg_mr}, or
 * {@code ibv_reg_mr_iova2} for a zero-based region). The lmr_context is the lkey, the rmr_context
 * the rkey (0 without remote privileges). Freeing it deregisters the region and leaves the segment
 * alone; it fails while an RMR is bound to it.
 *
 * <p>Behaviours: LMR_01, LMR_02.
 */
final class OfaLmr extends OfaHandle implements LocalMemoryRegion, IaObjects.Owned {
    final OfaIa ia;
    final OfaPz pz;
    final MemorySegment mr;
    private final MemorySegment segment;
    private final Set<MemPriv> privileges;
    private final VaType vaType;
    private final int lkey;
    private final int rkey;
    private final long registeredSize;
    /** RMRs bound to this LMR. */
    final AtomicInteger boundRmrs = new AtomicInteger();

    private OfaLmr(OfaIa ia, OfaPz pz, MemorySegment mr, MemorySegment segment, Set<MemPriv> privileges,
                   VaType vaType) {
        super(HandleType.LMR);
        this.ia = ia;
        this.pz = pz;
        this.mr = mr;
        this.segment = segment;
        this.privileges = Set.copyOf(privileges);
        this.vaType = vaType;
        this.lkey = IbvMr.LKEY.getInt(mr);
        this.rkey = IbvMr.RKEY.getInt(mr);
        this.registeredSize = IbvMr.LENGTH.getLong(mr);
    }

    /** {@code dat_lmr_create} (OBJ_05: a region of size 0 fails LENGTH_ERROR). Behaviours: OBJ_05. */
    static OfaLmr create(OfaIa ia, ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges,
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
                || privileges.contains(MemPriv.REMOTE_WRITE) || privileges.contains(MemPriv.REMOTE_ATOMIC))) {
            throw DatException.invalidParameter(4, "write privileges on a read-only segment");
        }
        if (vaType == VaType.ZB && (region.address() & 0xfff) != 0) {
            throw DatException.invalidParameter(3, "a zero-based region must start on a page boundary (4096)");
        }
        return ia.locked(() -> {
            OfaPz p = ia.ownPz(pz, 2);
            int access = access(privileges);
            if (ia.device().atomicCap == 0) {
                access &= ~Verbs.ACCESS_REMOTE_ATOMIC; // the device refuses it; no atomic can reach the LMR
            }
            if (ia.device().hasMwType1() || ia.device().hasMwType2()) {
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
                throw NativeErrors.resources(DatReturnSubtype.RESOURCE_MEMORY_REGION,
                        "dat_lmr_create (ibv_reg_mr; is the memlock limit high enough? ulimit -l)", e);
            }
            OfaLmr lmr = new OfaLmr(ia, p, mr.reinterpret(IbvMr.S.size()), region, privileges, vaType);
            p.users++;
            ia.objects().add(HandleType.LMR, lmr);
            return lmr;
        });
    }

    /** The {@code ibv_access_flags} of DAT memory privileges (local write with any write privilege). */
    static int access(Set<MemPriv> privileges) {
        int access = 0;
        if (privileges.contains(MemPriv.LOCAL_WRITE) || privileges.contains(MemPriv.REMOTE_WRITE)
                || privileges.contains(MemPriv.REMOTE_ATOMIC)) {
            access |= Verbs.ACCESS_LOCAL_WRITE; // ibv_reg_mr requires it with remote write or atomics
        }
        if (privileges.contains(MemPriv.REMOTE_ATOMIC)) {
            access |= Verbs.ACCESS_REMOTE_ATOMIC;
        }
        if (privileges.contains(MemPriv.REMOTE_WRITE)) {
            access |= Verbs.ACCESS_REMOTE_WRITE;
        }
        if (privileges.contains(MemPriv.REMOTE_READ)) {
            access |= Verbs.ACCESS_REMOTE_READ;
        }
        return access;
    }

    @Override
    public LmrParam query() {
        live();
        return new LmrParam(ia, pz, segment, segment.byteSize(), privileges, vaType, lkey, remote() ? rkey : 0,
                registeredSize, vaType == VaType.ZB ? 0 : segment.address());
    }

    private boolean remote() {
        return privileges.contains(MemPriv.REMOTE_READ) || privileges.contains(MemPriv.REMOTE_WRITE)
                || privileges.contains(MemPriv.REMOTE_ATOMIC);
    }

    /** {@code dat_lmr_free}: INVALID_STATE_LMR_IN_USE while an RMR is bound to it. Behaviours: LMR_01. */
    @Override
    public void free() {
        ia.free(this, () -> {
            if (boundRmrs.get() > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_LMR_IN_USE,
                        "LMR has " + boundRmrs.get() + " bound RMR(s)");
            }
        });
    }

    /**
     * Deregisters the region (LMR_04, LMR_05: its keys are dead from here on). IA lock held.
     *
     * <p>Behaviours: LMR_04, LMR_05.
     */
    @Override
    public void destroy() {
        markFreed();
        ia.lmrFreed();
        if (ia.objects().remove(HandleType.LMR, this)) {
            pz.users--;
        }
        NativeErrors.quietly("ibv_dereg_mr", () -> Verbs.get().deregMr(mr));
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    /** The lkey, also after free (a DTO naming a freed LMR then fails with the device's protection error). */
    int lkey() {
        return lkey;
    }

    Set<MemPriv> privileges() {
        return privileges;
    }

    /** {@code dat_lmr_sync_rdma_read/write}: x86-64 DMA is cache coherent, so it checks the triplets only. */
    static void checkTriplets(OfaIa ia, List<LmrTriplet> segments) {
        ia.live();
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
            if (!(t.lmr() instanceof OfaLmr l) || l.ia != ia || l.isFreed()) {
                throw DatException.invalidParameter(2, "segment names no live LMR of IA " + ia.name());
            }
            if (t.offset() + t.length() > l.segment().byteSize()) {
                throw DatException.invalidParameter(2, "segment " + t + " exceeds its LMR");
            }
        }
    }
}
