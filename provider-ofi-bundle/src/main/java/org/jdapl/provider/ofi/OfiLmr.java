package org.jdapl.provider.ofi;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiLayouts;

/**
 * An LMR: one {@code fi_mr_reg} of the consumer's native segment. The domain's {@code mr_mode}
 * decides the rest: with {@code FI_MR_PROV_KEY} the key is the provider's ({@code fi_mr_key}), else
 * a key of the IA's own counter is requested; with {@code FI_MR_VIRT_ADDR} remote addresses are
 * virtual addresses, else offsets from the region's start (libfabric's {@code ofi_mr_map_verify}
 * adds the region's base; the {@code offset} argument of {@code fi_mr_reg} is reserved): the LMR's
 * registered address is then 0 whatever its {@link VaType}, and a peer addresses it from 0, as the
 * kit's RDMA targets do ({@code registeredAddress + offset}). The descriptor ({@code fi_mr_desc}) goes with every local
 * segment of a DTO ({@code FI_MR_LOCAL}). lmr_context and rmr_context are the key.
 *
 * <p>Behaviours: OBJ_05, LMR_01, LMR_02, LMR_03, LMR_04, LMR_05.
 */
final class OfiLmr extends OfiObject implements LocalMemoryRegion {
    private static final AtomicInteger KEYS = new AtomicInteger(0x100);

    /** A key for a registration of the provider's own (where the provider does not choose keys). */
    static int nextKey() {
        return KEYS.getAndIncrement();
    }

    final OfiPz pz;
    final MemorySegment segment;
    final Set<MemPriv> privileges;
    final VaType vaType;
    final long mr;
    final long desc;
    final int key;
    final long registeredAddress;
    final AtomicInteger boundRmrs = new AtomicInteger();

    OfiLmr(OfiIa ia, OfiPz pz, MemorySegment segment, Set<MemPriv> privileges, VaType vaType) {
        super(ia, HandleType.LMR);
        if (segment == null) {
            throw DatException.invalidParameter(2, "no segment");
        }
        if (segment.byteSize() == 0) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "an LMR of 0 bytes");
        }
        if (!segment.isNative()) {
            throw DatException.invalidParameter(2, "libfabric registers native memory only, not a heap segment");
        }
        if (privileges == null || vaType == null) {
            throw DatException.invalidParameter(3, "null privileges or VA type");
        }
        this.pz = pz;
        this.segment = segment;
        this.privileges = privileges.isEmpty() ? EnumSet.noneOf(MemPriv.class) : EnumSet.copyOf(privileges);
        this.vaType = vaType;
        if (vaType == VaType.ZB && (ia.mrMode & Fi.FI_MR_VIRT_ADDR) != 0) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                    "zero-based regions are not possible: the provider addresses by virtual address (FI_MR_VIRT_ADDR)");
        }
        long address = segment.address();
        try {
            mr = FiCalls.mrReg(ia.domain, address, segment.byteSize(), access(this.privileges, true,
                            ia.rdm != null && ia.rdm.rxm && (ia.mrMode & Fi.FI_MR_LOCAL) == 0), 0,
                    KEYS.getAndIncrement(), 0);
        } catch (FiException e) {
            throw FiErrors.toDat(e);
        }
        long k = FiCalls.word(mr + FiLayouts.MR_KEY);
        if ((ia.mrMode & Fi.FI_MR_PROV_KEY) != 0 && (k >>> 32) != 0) {
            OfiIa.closeQuietly(mr);
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_MEMORY_REGION,
                    "the provider's key 0x" + Long.toHexString(k) + " does not fit a DAT context (32 bits)");
        }
        key = (int) k;
        desc = FiCalls.word(mr + FiLayouts.MR_MEM_DESC);
        registeredAddress = (ia.mrMode & Fi.FI_MR_VIRT_ADDR) != 0 && vaType == VaType.VA ? address : 0;
        pz.users.incrementAndGet();
        ia.added(this);
    }

    /** The libfabric access bits for DAT privileges (local access always, as verbs registers it). */
    static long access(Set<MemPriv> p, boolean local) {
        return access(p, local, false);
    }

    /**
     * The libfabric access bits for DAT privileges; {@code noMessages}: without {@code FI_SEND} and
     * {@code FI_RECV}. rxm registers a region of {@code FI_SEND} with {@code FI_REMOTE_READ} too (and
     * one of {@code FI_RECV} with {@code FI_REMOTE_WRITE} when it rendezvouses by writes) at its core
     * provider, for its rendezvous protocol ({@code rxm_mr_get_msg_access}, 1.17
     * {@code prov/rxm/src/rxm_domain.c}), so an LMR without remote read was read by a peer's RDMA Read
     * (LMR_06); where rxm does not ask {@code FI_MR_LOCAL} it registers the buffers of a rendezvous
     * itself and the LMR needs neither bit. Behaviours: LMR_06.
     */
    static long access(Set<MemPriv> p, boolean local, boolean noMessages) {
        long a = local ? (noMessages ? 0 : Fi.FI_SEND | Fi.FI_RECV) | Fi.FI_READ | Fi.FI_WRITE : 0;
        if (p.contains(MemPriv.REMOTE_READ)) {
            a |= Fi.FI_REMOTE_READ;
        }
        if (p.contains(MemPriv.REMOTE_WRITE)) {
            a |= Fi.FI_REMOTE_WRITE;
        }
        return a;
    }

    @Override
    public LmrParam query() {
        live();
        return new LmrParam(ia, pz, segment, segment.byteSize(), privileges, vaType, key, key, segment.byteSize(),
                registeredAddress);
    }

    @Override
    public void free() {
        live();
        if (boundRmrs.get() > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_LMR_IN_USE, "an RMR is bound to the LMR");
        }
        destroy();
        ia.removed(this);
    }

    @Override
    synchronized void destroy() {
        if (freed) {
            return;
        }
        freed = true;
        OfiIa.closeQuietly(mr);
        pz.users.decrementAndGet();
    }

    /**
     * The consumer's segment; it stays the consumer's, so it is returned after free too (LMR_02).
     *
     * <p>Behaviours: LMR_02.
     */
    @Override
    public MemorySegment segment() {
        return segment;
    }
}
