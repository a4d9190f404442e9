package org.jdapl.provider.ofi;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The IA's EPs whose receive credits need the IA's progress ({@link MsgCredits}): those holding
 * requests for a credit (or a count write that must be tried again), and those owing their peer a
 * count of posted receives. After every read of the IA's CQs (its progress thread and a consumer's EVD
 * poll) {@link #pump} posts the held requests whose credit came and writes the counts a hungry peer
 * waits for. The EPs are an array replaced on a change, so that the pump reads it without allocating;
 * with no EP holding or owing it reads nothing.
 */
final class HeldRequests {
    private final OfiProgress progress;
    private volatile OfiEp[] eps = new OfiEp[0];
    /** How many EPs hold requests for a receive credit, or a count write to try again. */
    private final AtomicInteger holding = new AtomicInteger();
    /** How many EPs owe their peer a count of receives that goes with their next send. */
    private final AtomicInteger owing = new AtomicInteger();

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
     * Marks ({@code on}) or unmarks {@code ep} as one that owes its peer a count of receives, to be
     * written if the peer turns hungry (the EP's lock is held). Unlike {@link #holding} it does not make
     * the progress thread read every CQ: the peer's hungry write wakes the thread's wait on the EP's
     * CQs, or lands during a consumer's poll of them.
     */
    void owing(OfiEp ep, boolean on) {
        if (ep.owing != on) {
            ep.owing = on;
            owing.getAndAdd(on ? 1 : -1);
        }
    }

    /**
     * Posts the requests that waited for receive credits which have come (after the CQs were read:
     * the peer's credit write or send lands during that progress), and writes the count of receives
     * an EP owes a peer that has turned hungry; the number posted. Nothing is allocated.
     */
    int pump() {
        if (holding.get() == 0 && owing.get() == 0) {
            return 0;
        }
        int n = 0;
        for (OfiEp ep : eps) { // an array: the loop allocates nothing
            if (ep.holding) {
                n += ep.pumpHeld();
            }
            if (ep.owing) {
                ep.answerHungry();
            }
        }
        return n;
    }
}
