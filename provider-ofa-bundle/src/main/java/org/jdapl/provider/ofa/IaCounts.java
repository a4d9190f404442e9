package org.jdapl.provider.ofa;

import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;

/**
 * What an IA counts (DCNT_IA_*): its objects created and freed (as {@link IaObjects} adds and removes
 * them), the connection requests at its service points and their answers, its asynchronous errors;
 * and the counters of its EPs and EVDs already freed, so that the IA's totals cover every EP and EVD
 * it had since the last reset. Used under the monitor of the IA's {@link IaObjects}.
 *
 * <p>Behaviours: EXT_09.
 */
final class IaCounts {
    private final Counts ia = Counts.of(IaCounter.class);
    private final long[] freedEps = new long[EpCounter.values().length];
    private final long[] freedEvds = new long[EvdCounter.values().length];

    void inc(IaCounter counter) {
        ia.inc(counter);
    }

    /** An object of {@code type} joined the IA (a CR: a request arrived at a service point). */
    void created(HandleType type) {
        IaCounter c = switch (type) {
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
            ia.inc(c);
        }
    }

    /** {@code o} left the IA: an EP's or EVD's counters join the freed totals. */
    void freed(HandleType type, IaObjects.Owned o) {
        IaCounter c = switch (type) {
            case PZ -> IaCounter.PZ_FREE;
            case LMR -> IaCounter.LMR_FREE;
            case RMR -> IaCounter.RMR_FREE;
            case PSP -> IaCounter.PSP_FREE;
            case RSP -> IaCounter.RSP_FREE;
            case SRQ -> IaCounter.SRQ_FREE;
            case EVD -> IaCounter.EVD_FREE;
            case EP -> IaCounter.EP_FREE;
            default -> null;
        };
        if (o instanceof OfaEp ep) {
            ep.counts().addInto(freedEps, false);
        } else if (o instanceof OfaEvd evd) {
            evd.counts().addInto(freedEvds, false);
        }
        if (c != null) {
            ia.inc(c);
        }
    }

    Counters<IaCounter> query(boolean reset) {
        return Counts.query(IaCounter.class, reset, ia);
    }

    /** The freed EPs' totals plus {@code live}'s counters; all zeroed if {@code reset}. */
    Counters<EpCounter> eps(Iterable<OfaEp> live, boolean reset) {
        long[] sum = freedEps.clone();
        for (OfaEp ep : live) {
            ep.counts().addInto(sum, reset);
        }
        if (reset) {
            java.util.Arrays.fill(freedEps, 0);
        }
        return Counters.of(EpCounter.class, sum);
    }

    /** The freed EVDs' totals plus {@code live}'s counters; all zeroed if {@code reset}. */
    Counters<EvdCounter> evds(Iterable<OfaEvd> live, boolean reset) {
        long[] sum = freedEvds.clone();
        for (OfaEvd evd : live) {
            evd.counts().addInto(sum, reset);
        }
        if (reset) {
            java.util.Arrays.fill(freedEvds, 0);
        }
        return Counters.of(EvdCounter.class, sum);
    }
}
