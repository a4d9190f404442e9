package org.jdapl.provider.ofa;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;

/**
 * The live objects of one IA by kind, with the provider-wide counts. Each object adds itself when it
 * is created and removes itself when it is destroyed ({@link Owned#destroy}); closing the IA
 * destroys what is left in dependency order: service points and requests, EPs, SRQs, RMRs, LMRs,
 * EVDs, CNOs, PZs.
 *
 * <p>Behaviours: OBJ_01.
 */
final class IaObjects {
    /** An object of the IA that destroys its own verbs resources. */
    interface Owned {
        /** Frees the object's resources and removes it from the IA (IA lock held; no checks). */
        void destroy();
    }

    private static final HandleType[] CLOSING_ORDER = {HandleType.PSP, HandleType.RSP, HandleType.CSP,
        HandleType.CR, HandleType.EP, HandleType.SRQ, HandleType.RMR, HandleType.LMR, HandleType.EVD,
        HandleType.CNO, HandleType.PZ};

    private final EnumMap<HandleType, Set<Owned>> live = new EnumMap<>(HandleType.class);
    private final ObjectCounts counts;
    /** The IA's DAT counters (DCNT_IA_*, and the freed EPs' and EVDs' totals). Guarded by this. */
    private final IaCounts iaCounts = new IaCounts();

    IaObjects(ObjectCounts counts) {
        this.counts = counts;
        for (HandleType t : CLOSING_ORDER) {
            live.put(t, new LinkedHashSet<>());
        }
    }

    synchronized void add(HandleType type, Owned o) {
        if (live.get(type).add(o)) {
            counts.opened(type);
            iaCounts.created(type);
        }
    }

    /** Removes the object; false if it was not there (already destroyed). */
    synchronized boolean remove(HandleType type, Owned o) {
        if (live.get(type).remove(o)) {
            counts.closed(type);
            iaCounts.freed(type, o);
            return true;
        }
        return false;
    }

    /** Marks the object freed and removes it; false if it was not there (already destroyed). */
    <T extends OfaHandle & Owned> boolean release(T o) {
        o.markFreed();
        return remove(o.type(), o);
    }

    /** Counts {@code counter} of the IA (a request answered, an asynchronous error). */
    synchronized void count(IaCounter counter) {
        iaCounts.inc(counter);
    }

    /** {@code dat_query_counters} on the IA. Behaviours: EXT_09. */
    synchronized Counters<IaCounter> queryCounters(boolean reset) {
        return iaCounts.query(reset);
    }

    /** The counters of the IA's EPs, live and freed, summed. */
    synchronized Counters<EpCounter> queryEpCounters(boolean reset) {
        return iaCounts.eps(of(HandleType.EP, OfaEp.class), reset);
    }

    /** The counters of the IA's EVDs, live and freed, summed ({@code extra}: the asynchronous EVD). */
    synchronized Counters<EvdCounter> queryEvdCounters(OfaEvd extra, boolean reset) {
        List<OfaEvd> evds = of(HandleType.EVD, OfaEvd.class);
        evds.add(extra);
        return iaCounts.evds(evds, reset);
    }

    synchronized boolean contains(HandleType type, Owned o) {
        return live.get(type).contains(o);
    }

    /** The live objects that keep a graceful close from succeeding (requests do not). */
    synchronized int inUse() {
        int n = 0;
        for (HandleType t : CLOSING_ORDER) {
            if (t != HandleType.CR) {
                n += live.get(t).size();
            }
        }
        return n;
    }

    /** The live objects of one kind, as a copy. */
    synchronized <T> List<T> of(HandleType type, Class<T> as) {
        List<T> l = new ArrayList<>();
        for (Owned o : live.get(type)) {
            if (as.isInstance(o)) {
                l.add(as.cast(o));
            }
        }
        return l;
    }

    /** Destroys every object, in dependency order (IA lock held). */
    void destroyAll() {
        for (HandleType t : CLOSING_ORDER) {
            List<Owned> objects;
            synchronized (this) {
                objects = List.copyOf(live.get(t));
            }
            for (Owned o : objects) {
                o.destroy();
            }
        }
    }
}
