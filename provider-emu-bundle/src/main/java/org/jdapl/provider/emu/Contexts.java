package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrScope;

/**
 * The contexts of one IA (guarded by its domain lock): the rmr_context table a peer's RDMA and a
 * send with invalidate are checked against, and the lmr_contexts in use. Contexts are random and
 * never 0, so a stale or guessed context names nothing with high probability.
 */
public final class Contexts {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Map<Integer, RemoteTarget> remote = new HashMap<>();
    private final Set<Integer> local = new HashSet<>();
    /** How many lmr_contexts were released: what a memo of checked segments depends on ({@link DtoChecks}). */
    private volatile int released;
    /** The last context {@link #target} found and what it names, so that a repeated lookup boxes nothing. */
    private volatile Found last;

    /** A context and what it names, replaced whole. */
    private record Found(int ctx, RemoteTarget target) {
    }

    /** A fresh rmr_context (not yet registered). */
    int newRmrContext() {
        int ctx;
        do {
            ctx = RANDOM.nextInt();
        } while (ctx == 0 || remote.containsKey(ctx));
        return ctx;
    }

    /** A fresh lmr_context, in use until {@link #releaseLmrContext}. */
    int newLmrContext() {
        int ctx;
        do {
            ctx = RANDOM.nextInt();
        } while (ctx == 0 || local.contains(ctx));
        local.add(ctx);
        return ctx;
    }

    void register(int ctx, RemoteTarget target) {
        remote.put(ctx, target);
        last = null;
    }

    void unregister(int ctx) {
        if (ctx != 0) {
            remote.remove(ctx);
            last = null;
        }
    }

    /** What {@code ctx} names, or null; the last one found is remembered until the table changes. */
    public RemoteTarget target(int ctx) {
        Found f = last;
        if (f != null && f.ctx == ctx) {
            return f.target;
        }
        RemoteTarget t = remote.get(ctx);
        if (t != null) {
            last = new Found(ctx, t);
        }
        return t;
    }

    void releaseLmrContext(int ctx) {
        local.remove(ctx);
        released++;
    }

    /** A count that changes whenever an LMR of the IA is unregistered (read without the domain lock). */
    int lmrsReleased() {
        return released;
    }

    /**
     * The memory {@code ctx} exposes to {@code ep}'s connection (LMR_04, LMR_05, LMR_06), or null if
     * the context names nothing live or refuses the access.
     */
    public MemorySegment resolve(int ctx, EmuEp ep, long address, long length, MemPriv needed) {
        RemoteTarget target = target(ctx);
        return target == null ? null : target.resolve(ep, address, length, needed);
    }

    /** A send with invalidate names {@code ctx}: revokes that RMR if {@code ep} may use it. */
    boolean invalidateRmr(int ctx, EmuEp ep) {
        if (remote.get(ctx) instanceof EmuRmr rmr && rmr.pz() == ep.pz()
                && (rmr.scope() != RmrScope.EP || rmr.binding().ep() == ep)) {
            rmr.revoke();
            return true;
        }
        return false;
    }

    void clear() {
        remote.clear();
        last = null;
        local.clear();
        released++;
    }
}
