package org.jdapl.provider.ofi;

import java.util.ArrayList;
import java.util.List;

import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.IaCounter;

/**
 * The counters of one IA (DAT_COUNTERS on a MSG IA): its own (objects created and freed, connection
 * requests), and the totals of its EPs and EVDs, the live ones' and the freed ones' (whose counts are
 * kept here when they are freed). Creations and frees are counted where {@link OfiIa} learns of them
 * ({@link OfiIa#added}, {@link OfiIa#removed}).
 *
 * <p>Behaviours: EXT_09.
 */
final class OfiCounters {
    private final OfiIa ia;
    private final OfiCounts own = new OfiCounts(IaCounter.values().length);
    private final OfiCounts freedEps = new OfiCounts(EpCounter.values().length);
    private final OfiCounts freedEvds = new OfiCounts(EvdCounter.values().length);

    OfiCounters(OfiIa ia) {
        this.ia = ia;
    }

    void inc(IaCounter c) {
        own.inc(c);
    }

    /** An object of the IA was created. */
    void opened(OfiObject o) {
        IaCounter c = switch (o.kind()) {
            case PZ -> IaCounter.PZ_CREATE;
            case LMR -> IaCounter.LMR_CREATE;
            case RMR -> IaCounter.RMR_CREATE;
            case PSP -> IaCounter.PSP_CREATE;
            case RSP -> IaCounter.RSP_CREATE;
            case EVD -> IaCounter.EVD_CREATE;
            case EP -> IaCounter.EP_CREATE;
            case SRQ -> IaCounter.SRQ_CREATE;
            case CR -> IaCounter.SP_CR;
            default -> null;
        };
        if (c != null) {
            own.inc(c);
        }
    }

    /** An object of the IA was freed: an EP's or EVD's counts go on in the IA's totals. */
    void closed(OfiObject o) {
        IaCounter c = switch (o.kind()) {
            case PZ -> IaCounter.PZ_FREE;
            case LMR -> IaCounter.LMR_FREE;
            case RMR -> IaCounter.RMR_FREE;
            case PSP -> IaCounter.PSP_FREE;
            case RSP -> IaCounter.RSP_FREE;
            case EVD -> IaCounter.EVD_FREE;
            case EP -> IaCounter.EP_FREE;
            case SRQ -> IaCounter.SRQ_FREE;
            default -> null;
        };
        if (c != null) {
            own.inc(c);
        }
        long[] moved;
        if (o instanceof OfiEp ep) {
            moved = new long[EpCounter.values().length];
            ep.counts.addInto(moved, true);
            add(freedEps, moved);
        } else if (o instanceof OfiEvd evd) {
            moved = new long[EvdCounter.values().length];
            evd.counts.addInto(moved, true);
            add(freedEvds, moved);
        }
    }

    private static void add(OfiCounts to, long[] values) {
        synchronized (to) {
            for (int i = 0; i < values.length; i++) {
                to.addAt(i, values[i]);
            }
        }
    }

    Counters<IaCounter> query(boolean reset) {
        return OfiCounts.query(IaCounter.class, reset, List.of(own));
    }

    Counters<EpCounter> queryEps(boolean reset) {
        List<OfiCounts> sides = new ArrayList<>();
        synchronized (freedEps) {
            sides.add(freedEps);
            for (OfiEp ep : ia.eps.values()) {
                sides.add(ep.counts);
            }
            return OfiCounts.query(EpCounter.class, reset, sides);
        }
    }

    Counters<EvdCounter> queryEvds(boolean reset) {
        List<OfiCounts> sides = new ArrayList<>();
        synchronized (freedEvds) {
            sides.add(freedEvds);
            for (OfiObject o : ia.objects) {
                if (o instanceof OfiEvd evd) {
                    sides.add(evd.counts);
                }
            }
            return OfiCounts.query(EvdCounter.class, reset, sides);
        }
    }
}
