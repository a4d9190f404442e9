package org.jdapl.provider.ofi;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiLayouts;

/**
 * An RMR. libfabric has no memory windows: a bind registers exactly the bound range of the LMR's
 * segment with the bind's remote privileges ({@code fi_mr_reg}; its key is the rmr_context), so the
 * provider enforces the RMR's bounds and rights; an unbind or a rebind closes the previous
 * registration. The bind completes at once as an RMR_BIND event on the EP's request EVD. An RMR of
 * EP scope can be used through any EP of its PZ (a registration has no endpoint binding).
 *
 * <p>Behaviours: LMR_01, LMR_06.
 */
final class OfiRmr extends OfiObject implements RemoteMemoryRegion {
    private static final AtomicInteger KEYS = new AtomicInteger(0x4000_0000);

    private final OfiPz pz;
    private final RmrScope scope;
    private OfiLmr lmr;
    private long offset;
    private long length;
    private Set<MemPriv> privileges = EnumSet.noneOf(MemPriv.class);
    private VaType vaType = VaType.VA;
    private long mr;
    private int context;

    OfiRmr(OfiPz pz, RmrScope scope) {
        super(pz.ia, HandleType.RMR);
        this.pz = pz;
        this.scope = scope;
        pz.users.incrementAndGet();
        ia.added(this);
    }

    @Override
    public synchronized RmrParam query() {
        live();
        return new RmrParam(ia, pz, lmr, offset, length, privileges, context, scope, vaType);
    }

    @Override
    public int bind(LocalMemoryRegion target, long off, long len, Set<MemPriv> privs, VaType va, Endpoint ep,
                    long cookie, Set<CompletionFlag> flags) {
        live();
        OfiEp e = OfiEp.of(ia, ep);
        OfiLmr l = null;
        if (target != null) {
            if (!(target instanceof OfiLmr x) || x.ia != ia || x.freed) {
                throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_LMR, "not a live LMR of this IA");
            }
            l = x;
            if (l.pz != pz || e.pz() != pz) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the LMR, RMR and EP are not of one PZ");
            }
            if (off < 0 || len < 0 || off + len > l.segment.byteSize()) {
                throw new DatException(DatReturnType.LENGTH_ERROR, "the range is not within the LMR");
            }
            if (privs == null || !l.privileges.containsAll(privs)) {
                throw new DatException(DatReturnType.PRIVILEGES_VIOLATION, "the LMR does not grant " + privs);
            }
        }
        return e.bindRmr(this, l, off, len, privs, va == null ? VaType.VA : va, cookie, flags);
    }

    /** Registers the bound range (the EP's lock is held); the new rmr_context. */
    synchronized int rebind(OfiLmr l, long off, long len, Set<MemPriv> privs, VaType va) {
        release();
        if (l == null || len == 0) {
            return 0;
        }
        long address = l.segment.address() + off;
        long m;
        try {
            m = FiCalls.mrReg(ia.domain, address, len, OfiLmr.access(privs, false), 0, KEYS.getAndIncrement(), 0);
        } catch (FiException e) {
            throw FiErrors.toDat(e);
        }
        mr = m;
        context = (int) FiCalls.word(m + FiLayouts.MR_KEY);
        lmr = l;
        offset = off;
        length = len;
        privileges = privs.isEmpty() ? EnumSet.noneOf(MemPriv.class) : EnumSet.copyOf(privs);
        vaType = va;
        l.boundRmrs.incrementAndGet();
        return context;
    }

    private void release() {
        if (mr != 0) {
            OfiIa.closeQuietly(mr);
            mr = 0;
            lmr.boundRmrs.decrementAndGet();
            lmr = null;
            context = 0;
            offset = 0;
            length = 0;
            privileges = EnumSet.noneOf(MemPriv.class);
        }
    }

    @Override
    public void free() {
        live();
        destroy();
        ia.removed(this);
    }

    @Override
    synchronized void destroy() {
        if (freed) {
            return;
        }
        freed = true;
        release();
        pz.users.decrementAndGet();
    }
}
