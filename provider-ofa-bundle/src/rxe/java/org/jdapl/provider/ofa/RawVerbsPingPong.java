package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.provider.ofa.verbs.Structs.IbvRecvWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSendWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.Structs.IbvWc;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsContext;

/**
 * The floor under the DAT ping-pong: the same ping-pong on the same queue pairs and CQs of two
 * connected OFA EPs, but with bare verbs through the same downcalls (ibv_poll_cq, ibv_post_recv,
 * ibv_post_send with prebuilt work requests), as perftest does in C. The DAT layer is bypassed while
 * it runs: its EVDs must not be polled by anyone else, and its rings never see these work requests.
 */
public final class RawVerbsPingPong {
    private static final long WR_ID_SEND = 1;
    private static final long WR_ID_RECV = 2;

    private RawVerbsPingPong() {
    }

    /** One side's prebuilt work requests and its CQ. */
    private static final class Side {
        final VerbsContext verbs;
        final long qp;
        final long cq;
        final long recvWr;
        final long sendWr;
        final long badWr;
        final long wc;
        final MemorySegment wcs;
        final MemorySegment send;
        /** Sends signalled as the DAT EP signals suppressed ones: after a run of half its queue unsignalled. */
        final int signalEvery;
        int unsignalled;
        int signalledOut;

        Side(Arena arena, Endpoint endpoint, LocalMemoryRegion lmr, int size) {
            OfaEp ep = (OfaEp) endpoint;
            OfaLmr l = (OfaLmr) lmr;
            verbs = ep.ia.device().context;
            qp = ep.queuePair().address();
            cq = ep.binding().recvEvd().cq.segment.address();
            if (ep.binding().requestEvd() != ep.binding().recvEvd()) {
                throw new IllegalArgumentException("the floor ping-pong needs one EVD for requests and receives");
            }
            if (size > ep.queuePair().inlineLimit()) {
                throw new IllegalArgumentException(size + " bytes do not fit inline");
            }
            signalEvery = Math.max(1, ep.binding().attributes().maxRequestDtos()) / 2 + 1;
            MemorySegment rwr = arena.allocate(IbvRecvWr.S.size(), 8);
            IbvRecvWr.WR_ID.setLong(rwr, WR_ID_RECV);
            IbvRecvWr.SG_LIST.setPointer(rwr, sge(arena, l, 4096, size));
            IbvRecvWr.NUM_SGE.setInt(rwr, 1);
            send = arena.allocate(IbvSendWr.S.size(), 8);
            IbvSendWr.WR_ID.setLong(send, WR_ID_SEND);
            IbvSendWr.SG_LIST.setPointer(send, sge(arena, l, 0, size));
            IbvSendWr.NUM_SGE.setInt(send, 1);
            IbvSendWr.OPCODE.setInt(send, Verbs.WR_SEND);
            recvWr = rwr.address();
            sendWr = send.address();
            badWr = arena.allocate(8, 8).address();
            wcs = arena.allocate(IbvWc.S.size(), 8);
            wc = wcs.address();
        }

        /** The side of {@code endpoint}, with its first receive posted. */
        static Side withReceive(Arena arena, Endpoint endpoint, LocalMemoryRegion lmr, int size) {
            Side s = new Side(arena, endpoint, lmr, size);
            s.postRecv();
            return s;
        }

        /** A gather entry of {@code size} bytes at {@code offset} of the LMR. */
        private static MemorySegment sge(Arena arena, OfaLmr lmr, long offset, int size) {
            MemorySegment sge = arena.allocate(IbvSge.S.size(), 8);
            IbvSge.ADDR.setLong(sge, lmr.segment().address() + offset);
            IbvSge.LENGTH.setInt(sge, size);
            IbvSge.LKEY.setInt(sge, lmr.lkey());
            return sge;
        }

        void postRecv() {
            check("ibv_post_recv", verbs.postRecv(qp, recvWr, badWr));
        }

        /**
         * Sends inline, signalled every {@link #signalEvery}th time and the last time, so that the send
         * queue is left empty.
         */
        void postSend(boolean last) {
            boolean signal = ++unsignalled == signalEvery || last;
            if (signal) {
                unsignalled = 0;
                signalledOut++;
            }
            IbvSendWr.SEND_FLAGS.setInt(send, Verbs.SEND_INLINE | (signal ? Verbs.SEND_SIGNALED : 0));
            check("ibv_post_send", verbs.postSend(qp, sendWr, badWr));
        }

        /**
         * Busy-polls the CQ until the receive completes; send completions are taken on the way. Returns
         * the polls that found nothing.
         */
        int awaitReceive(long deadline) {
            int empty = 0;
            for (int spins = 0; ; spins++) {
                if (verbs.pollCq(cq, 1, wc) == 0) {
                    empty++;
                    if ((spins & 0xfff) == 0 && System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("no receive completion within the time limit");
                    }
                    continue;
                }
                if (wcs.get(ValueLayout.JAVA_INT, IbvWc.STATUS.offset()) != 0) {
                    throw new IllegalStateException("work completion status "
                            + wcs.get(ValueLayout.JAVA_INT, IbvWc.STATUS.offset()));
                }
                long wrId = wcs.get(ValueLayout.JAVA_LONG, 0);
                if (wrId == WR_ID_RECV) {
                    return empty;
                }
                sendCompleted(wrId);
            }
        }

        private void sendCompleted(long wrId) {
            if (wrId != WR_ID_SEND) {
                throw new IllegalStateException("completion of work request " + wrId + " of the DAT EP");
            }
            signalledOut--;
        }

        /** Takes the signalled sends still to come, so that the DAT EP finds its CQ as it left it. */
        void drainSends(long deadline) {
            while (signalledOut > 0) {
                if (verbs.pollCq(cq, 1, wc) > 0) {
                    sendCompleted(wcs.get(ValueLayout.JAVA_LONG, 0));
                } else if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(signalledOut + " send completions did not come");
                }
            }
        }

        private static void check(String what, int r) {
            if (r != 0) {
                throw new IllegalStateException(what + " failed: errno " + r);
            }
        }
    }

    /**
     * The median half round trip, in microseconds, from the times at which a ping-pong's client posted
     * its sends: as perftest's ib_send_lat, a round trip runs from one post to the next, so it takes in
     * the client's receive post too.
     */
    public static double medianHalfRoundTrip(long[] posted) {
        long[] rtt = new long[posted.length - 1];
        for (int i = 0; i < rtt.length; i++) {
            rtt[i] = posted[i + 1] - posted[i];
        }
        Arrays.sort(rtt);
        return rtt[rtt.length / 2] / 2.0 / 1000.0;
    }

    /** Nanoseconds per {@code ibv_poll_cq} of the EP's (empty) CQ, over {@code n} calls. */
    public static double emptyPoll(Endpoint endpoint, int n) {
        OfaEp ep = (OfaEp) endpoint;
        try (Arena arena = Arena.ofConfined()) {
            long wc = arena.allocate(IbvWc.S.size(), 8).address();
            long cq = ep.binding().recvEvd().cq.segment.address();
            VerbsContext verbs = ep.ia.device().context;
            long t0 = System.nanoTime();
            int found = 0;
            for (int i = 0; i < n; i++) {
                found += verbs.pollCq(cq, 1, wc);
            }
            long t = System.nanoTime() - t0;
            if (found != 0) {
                throw new IllegalStateException("the CQ was not empty");
            }
            return (double) t / n;
        }
    }

    /**
     * The median half round trip, in microseconds, of {@code iters} ping-pongs of {@code size} bytes
     * between two connected EPs with no DTO outstanding and nothing in their CQs; {@code a}'s buffers are {@code la} (send at
     * 0, receive at 4096), {@code b}'s are {@code lb}. The calling thread is the client; {@code serverThread}
     * runs the server's loop.
     */
    public static double pingPong(Endpoint a, Endpoint b, LocalMemoryRegion la, LocalMemoryRegion lb, int size,
                                  int iters, Executor serverThread) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Arena arena = Arena.ofShared()) {
            Side sa = Side.withReceive(arena, a, la, size);
            Side sb = Side.withReceive(arena, b, lb, size);
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < iters; i++) {
                    sb.awaitReceive(deadline);
                    if (i + 1 < iters) {
                        sb.postRecv();
                    }
                    sb.postSend(i + 1 == iters);
                }
            }, serverThread);
            long[] posted = new long[iters];
            for (int i = 0; i < iters; i++) {
                posted[i] = System.nanoTime();
                sa.postSend(i + 1 == iters);
                sa.awaitReceive(deadline);
                if (i + 1 < iters) {
                    sa.postRecv();
                }
            }
            server.get(60, TimeUnit.SECONDS);
            sa.drainSends(deadline);
            sb.drainSends(deadline);
            return medianHalfRoundTrip(posted);
        }
    }

    /**
     * The same exchange as {@link #pingPong} on one thread, for counting instructions: {@code a} sends,
     * {@code b} takes the receive, posts the next one and answers, {@code a} takes the answer and posts
     * its next receive. rxe delivers a send within the {@code ibv_post_send} call, so every poll finds
     * its completion and each step runs once per message. Returns the CQ polls that found nothing.
     */
    public static long inTurn(Endpoint a, Endpoint b, LocalMemoryRegion la, LocalMemoryRegion lb, int size,
                              int iters) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Arena arena = Arena.ofShared()) {
            Side sa = Side.withReceive(arena, a, la, size);
            Side sb = Side.withReceive(arena, b, lb, size);
            long empty = 0;
            for (int i = 0; i < iters; i++) {
                boolean last = i + 1 == iters;
                sa.postSend(last);
                empty += sb.awaitReceive(deadline);
                if (!last) {
                    sb.postRecv();
                }
                sb.postSend(last);
                empty += sa.awaitReceive(deadline);
                if (!last) {
                    sa.postRecv();
                }
            }
            sa.drainSends(deadline);
            sb.drainSends(deadline);
            return empty;
        }
    }
}
