package org.jdapl.provider.ofi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receives of an SRQ on an IA over RDM endpoints, lent to its EPs' data endpoints. libfabric's
 * shared receive context cannot serve there: shm 1.17 writes every receive of a context to the one
 * CQ bound to the context ({@code smr_srx_bind} keeps a single {@code srx->cq}, {@code smr_srx_ctx}
 * completes on it), so the completion does not tell which EP took the receive; and each DAT EP owns
 * an RDM data endpoint of its own (RDM_PROTOCOL.md). So the SRQ keeps its receives and lends up to
 * {@link #LEND} of them at a time, oldest first, to each EP whose data endpoint is open: a lent receive
 * is posted with {@code fi_recvv} on that endpoint, with the SRQ's context, and completes on the EP's
 * own receive CQ ({@link EpSrq}); each completion read lends the next. A message that reaches an EP
 * without a lent receive waits in the provider (shm's and rxm's unexpected queues) until the EP gets
 * one, as a send to an EP without a receive does on every RDM IA. A receive counts as taken (the
 * low watermark, the EP's count) when its completion is read, as on a shared receive context. When
 * an EP's data endpoint closes (disconnect, free), the receives lent to it and not taken go back to
 * the SRQ, first in line, and are lent to the others: DAT's SRQ receives belong to no EP until one
 * takes them, so an EP's disconnect flushes none of them.
 *
 * <p>What lending cannot give: an SRQ with fewer receives than {@link #LEND} times its EPs may hold a
 * receive lent to an idle EP while a message to another EP waits for one. All calls come with the
 * SRQ's lock held ({@link OfiSrq}).
 *
 * <p>Behaviours: SRQ_01, SRQ_02, EP_01, EP_02.
 */
final class RdmSrq {
    private static final Logger LOG = LoggerFactory.getLogger(RdmSrq.class);
    /** The receives lent to one EP at a time. */
    static final int LEND = 2;

    /** A receive of the SRQ: its segments (iov pairs, then descriptors) as {@code fi_recvv} takes them. */
    private record Recv(long context, long[] iov, long[] desc) {
    }

    private final MemorySegment iov;
    private final MemorySegment desc;
    /** Receives not lent, in posting order. */
    private final ArrayDeque<Recv> waiting = new ArrayDeque<>();
    /** Lent receives by context, each with the EP it is lent to. */
    private final Map<Long, Recv> lent = new HashMap<>();
    private final Map<Long, EpSrq> lentTo = new HashMap<>();
    /** The EPs whose data endpoint is open, with the endpoint's fid and the receives lent to it. */
    private final Map<EpSrq, long[]> borrowers = new LinkedHashMap<>();

    RdmSrq(MemorySegment iov, MemorySegment desc) {
        this.iov = iov;
        this.desc = desc;
    }

    /** A receive posted to the SRQ, its {@code count} segments in the SRQ's iov and desc arrays now. */
    void posted(long context, int count) {
        long[] i = new long[2 * count];
        long[] d = new long[count];
        for (int k = 0; k < count; k++) {
            i[2 * k] = iov.get(ValueLayout.JAVA_LONG, 16L * k);
            i[2 * k + 1] = iov.get(ValueLayout.JAVA_LONG, 16L * k + 8);
            d[k] = desc.get(ValueLayout.JAVA_LONG, 8L * k);
        }
        waiting.add(new Recv(context, i, d));
        lend();
    }

    /** The data endpoint {@code fid} of {@code ep} is open: receives are lent to it. */
    void open(EpSrq ep, long fid) {
        borrowers.put(ep, new long[] {fid, 0});
        lend();
    }

    /** The data endpoint of {@code ep} closes: nothing more is lent to it. */
    void closing(EpSrq ep) {
        borrowers.remove(ep);
    }

    /**
     * The completion of {@code context} was read on the CQ of {@code ep}: whether it names a receive
     * lent to that EP (then it is no longer lent; the caller retires it).
     */
    boolean taken(long context, EpSrq ep) {
        if (lentTo.get(context) != ep) {
            return false;
        }
        lentTo.remove(context);
        lent.remove(context);
        long[] b = borrowers.get(ep);
        if (b != null) {
            b[1]--;
        }
        return true;
    }

    /** The receive {@code context} lent to {@code ep} was cancelled (its endpoint closed): back to the SRQ, first. */
    void giveBack(long context, EpSrq ep) {
        if (lentTo.get(context) != ep) {
            return;
        }
        lentTo.remove(context);
        waiting.addFirst(lent.remove(context));
        long[] b = borrowers.get(ep);
        if (b != null) {
            b[1]--;
        }
    }

    /** Every receive still lent to {@code ep} (its endpoint is closed) goes back to the SRQ and to the other EPs. */
    void returnAll(EpSrq ep) {
        Long[] contexts = lentTo.entrySet().stream().filter(e -> e.getValue() == ep).map(Map.Entry::getKey)
                .sorted((a, b) -> Long.compare(b, a)).toArray(Long[]::new);
        for (Long c : contexts) {
            giveBack(c, ep);
        }
        lend();
    }

    /** Lends the waiting receives, one per EP a round, each EP up to {@link #LEND}. */
    void lend() {
        boolean more = true;
        while (more && !waiting.isEmpty()) {
            more = false;
            for (Map.Entry<EpSrq, long[]> e : borrowers.entrySet()) {
                long[] b = e.getValue();
                if (b[1] >= LEND || waiting.isEmpty()) {
                    continue;
                }
                Recv r = waiting.peekFirst();
                for (int k = 0; k < r.desc.length; k++) {
                    iov.set(ValueLayout.JAVA_LONG, 16L * k, r.iov[2 * k]);
                    iov.set(ValueLayout.JAVA_LONG, 16L * k + 8, r.iov[2 * k + 1]);
                    desc.set(ValueLayout.JAVA_LONG, 8L * k, r.desc[k]);
                }
                long rc = FiCalls.recvv(b[0], iov.address(), desc.address(), r.desc.length, r.context);
                if (rc != 0) {
                    if (rc != -Fi.FI_EAGAIN) {
                        LOG.debug("lending a receive of the SRQ: fi_recvv {}", Fi.get().strerror((int) -rc));
                    }
                    continue;
                }
                waiting.removeFirst();
                lent.put(r.context, r);
                lentTo.put(r.context, e.getKey());
                b[1]++;
                more = true;
            }
        }
    }
}
