package org.jdapl.provider.ofi;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The IA's EPs whose receive credits need the IA's progress ({@link MsgCredits}): those holding
 * requests for a credit (or a count write that must be tried again). After every read of the IA's CQs
 * (its progress thread and a consumer's EVD poll) {@link #pump} posts the held requests whose credit
 * came. The EPs are an array replaced on a change, so that the pump reads it without allocating; with
 * no EP holding it reads nothing.
 */
final class HeldRequests {
    private final OfiProgress progress;
    private volatile OfiEp[] eps = new OfiEp[0];
    /** How many EPs hold requests for a receive credit, or a count write to try again. */
    private final AtomicInteger holding = new AtomicInteger();

    HeldRequests(OfiProgress progress) {
        this.progress = progress;
    }

    /** Adds ({@code add}: its creation) or removes (its destruction) an EP of the IA. */
    synchronized void ep(OfiEp ep, boolean add) {
        List<OfiEp> l = new ArrayList<>(List.of(eps));
        if (add) {
            l.add(ep);
        } else {
            l.remove(ep);
        }
        eps = l.toArray(new OfiEp[0]);
    }

    /**
     * Marks ({@code on}) or unmarks {@code ep} as one whose held requests {@link #pump} posts (the EP's
     * lock is held); the first to hold wakes the progress thread, which reads every CQ meanwhile
     * ({@link #holds}).
     */
    void holding(OfiEp ep, boolean on) {
        if (ep.holding != on) {
            ep.holding = on;
            if (holding.getAndAdd(on ? 1 : -1) == 0 && on) {
                progress.holdingBegan();
            }
        }
    }

    /**
     * Whether an EP holds requests for a receive credit: the credit comes with the progress of that
     * EP's CQs, which a consumer polling another EVD does not make, so the progress thread reads every
     * CQ meanwhile.
     */
    boolean holds() {
        return holding.get() > 0;
    }

    /**
     * Posts the requests that waited for receive credits which have come (after the CQs were read:
     * the peer's credit write lands during that progress), and the count writes to try again; the
     * number posted. Nothing is allocated.
     */
    int pump() {
        if (holding.get() == 0) {
            return 0;
        }
        int n = 0;
        for (OfiEp ep : eps) { // an array: the loop allocates nothing
            if (ep.holding) {
                n += ep.pumpHeld();
            }
        }
        return n;
    }
}
