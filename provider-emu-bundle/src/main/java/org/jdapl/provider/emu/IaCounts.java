package org.jdapl.provider.emu;

import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.IaCounter;

/**
 * What an IA counts (DCNT_IA_*): its objects created and freed, the connection requests at its service
 * points and their answers, its asynchronous events; and the counters of its EPs and EVDs already
 * freed, so that the IA's totals ({@link EmuIa#queryEpCounters}) cover every object it had since the
 * last reset. Used under the IA's domain lock.
 */
final class IaCounts {
    static final int EP_COUNTERS = EpCounter.values().length;
    static final int EVD_COUNTERS = EvdCounter.values().length;

    private final Counts ia = new Counts(IaCounter.values().length);
    private long[] freedEps = new long[EP_COUNTERS];
    private long[] freedEvds = new long[EVD_COUNTERS];

    void inc(IaCounter counter) {
        ia.inc(counter.ordinal());
    }

    /** {@code object} was added to the IA's table. */
    void created(EmuObject object) {
        IaCounter c = switch (object.kind()) {
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
            inc(c);
        }
    }

    /** {@code object} left the IA's table (freed): an EP's or EVD's counters join the freed totals. */
    void freed(EmuObject object) {
        IaCounter c = switch (object) {
            case EmuPz p -> IaCounter.PZ_FREE;
            case EmuLmr l -> IaCounter.LMR_FREE;
            case EmuRmr r -> IaCounter.RMR_FREE;
            case EmuPsp p -> IaCounter.PSP_FREE;
            case EmuRsp r -> IaCounter.RSP_FREE;
            case EmuSrq s -> IaCounter.SRQ_FREE;
            case EmuEvd e -> {
                e.producerCounts().addInto(freedEvds, false);
                e.consumerCounts().addInto(freedEvds, false);
                yield IaCounter.EVD_FREE;
            }
            case EmuEp e -> {
                e.evds().counts().addInto(freedEps, false);
                e.evds().peerCounts().addInto(freedEps, false);
                yield IaCounter.EP_FREE;
            }
            default -> null;
        };
        if (c != null) {
            inc(c);
        }
    }

    Counters<IaCounter> query(boolean reset) {
        return Counts.query(IaCounter.class, reset, ia);
    }

    /** The freed EPs' totals plus {@code live}'s counters; all zeroed if {@code reset}. */
    Counters<EpCounter> eps(Iterable<EmuEp> live, boolean reset) {
        long[] sum = freedEps.clone();
        for (EmuEp ep : live) {
            ep.evds().counts().addInto(sum, reset);
            ep.evds().peerCounts().addInto(sum, reset);
        }
        if (reset) {
            freedEps = new long[EP_COUNTERS];
        }
        return Counters.of(EpCounter.class, sum);
    }

    /** The freed EVDs' totals plus {@code live}'s counters; all zeroed if {@code reset}. */
    Counters<EvdCounter> evds(Iterable<EmuEvd> live, boolean reset) {
        long[] sum = freedEvds.clone();
        for (EmuEvd evd : live) {
            evd.producerCounts().addInto(sum, reset);
            evd.consumerCounts().addInto(sum, reset);
        }
        if (reset) {
            freedEvds = new long[EVD_COUNTERS];
        }
        return Counters.of(EvdCounter.class, sum);
    }
}
