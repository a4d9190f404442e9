package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.util.Set;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.VaType;

/**
 * An emulated Remote Memory Region (memory window). A bind exposes part of an LMR under a new
 * random rmr_context; an unbind, a rebind or a free revokes the old one at once. An RMR of EP scope
 * is reachable only through the connection of the EP it was bound on.
 */
final class EmuRmr extends EmuObject implements RemoteMemoryRegion, RemoteTarget {
    private final EmuIa ia;
    private final EmuPz pz;
    private final RmrScope scope;
    private Binding binding;

    /** What one bind exposed. */
    record Binding(EmuLmr lmr, long offset, long length, Set<MemPriv> privileges, VaType vaType, EmuEp ep,
                   int context) {
    }

    EmuRmr(EmuIa ia, EmuPz pz, RmrScope scope) {
        super(HandleType.RMR);
        this.ia = ia;
        this.pz = pz;
        this.scope = scope;
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuPz pz() {
        return pz;
    }

    RmrScope scope() {
        return scope;
    }

    Binding binding() {
        return binding;
    }

    @Override
    public RmrParam query() {
        return ia.locked(() -> {
            checkLive();
            Binding b = binding;
            return b == null
                    ? new RmrParam(ia, pz, null, 0, 0, Dat.MEM_PRIV_NONE, 0, scope, VaType.VA)
                    : new RmrParam(ia, pz, b.lmr(), b.offset(), b.length(), b.privileges(), b.context(), scope,
                    b.vaType());
        });
    }

    @Override
    public int bind(LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges, VaType vaType,
                    Endpoint ep, long cookie, Set<CompletionFlag> flags) {
        return ia.locked(() -> {
            checkLive();
            EmuEp endpoint = ia.own(ep, EmuEp.class, HandleType.EP);
            return endpoint.postBind(this, lmr, offset, length, privileges, vaType, cookie, flags);
        });
    }

    /** Makes {@code b} the binding (null unbinds), revoking the previous context (fabric lock held). */
    void apply(Binding b) {
        revoke();
        binding = b;
        if (b != null) {
            b.lmr().addBinding();
            ia.contexts().register(b.context(), this);
        }
    }

    /** Revokes the current binding, if any, when it was made by {@code b} (a flushed bind). */
    void revokeIf(Binding b) {
        if (b != null && binding == b) {
            revoke();
        }
    }

    /** Revokes the binding of an EP-scope RMR bound through {@code ep} (the EP is freed). */
    void revokeIfBoundTo(EmuEp ep) {
        if (binding != null && binding.ep() == ep && scope == RmrScope.EP) {
            revoke();
        }
    }

    void revoke() {
        if (binding != null) {
            ia.contexts().unregister(binding.context());
            binding.lmr().removeBinding();
            binding = null;
        }
    }

    @Override
    public void free() {
        freeWith(this::destroy);
    }

    void destroy() {
        revoke();
        markFreed();
        pz.unuse();
    }

    @Override
    public MemorySegment resolve(EmuEp ep, long address, long length, MemPriv needed) {
        Binding b = binding;
        if (isFreed() || b == null || b.lmr().isFreed() || ep.pz() != pz || !b.privileges().contains(needed)
                || (scope == RmrScope.EP && b.ep() != ep) || !b.lmr().segment().scope().isAlive()) {
            return null;
        }
        long base = b.vaType() == VaType.VA ? b.lmr().registeredAddress() + b.offset() : 0;
        return EmuLmr.slice(b.lmr().segment(), b.offset(), b.length(), base, address, length);
    }

    @Override
    public long locate(EmuEp ep, long address, long length, MemPriv needed) {
        Binding b = binding;
        if (isFreed() || b == null || b.lmr().isFreed() || ep.pz() != pz || !b.privileges().contains(needed)
                || (scope == RmrScope.EP && b.ep() != ep) || !b.lmr().segment().scope().isAlive()) {
            return -1;
        }
        long base = b.vaType() == VaType.VA ? b.lmr().registeredAddress() + b.offset() : 0;
        return EmuLmr.offsetOf(b.offset(), b.length(), base, address, length);
    }

    @Override
    public MemorySegment backing() {
        Binding b = binding;
        return b == null ? null : b.lmr().segment();
    }
}
