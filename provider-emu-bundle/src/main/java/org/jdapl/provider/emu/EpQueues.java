package org.jdapl.provider.emu;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.LmrTriplet;

/**
 * The two work queues of one EP: the request queue (sends, RDMA Reads and Writes, RMR binds), which
 * the EP's link processes in posting order, and the receive queue, or the EP's share of its SRQ with
 * the use {@code dat_ep_recv_query} reports and the watermarks {@code dat_ep_set_watermark} sets.
 *
 * <p>The request queue is changed under the domain lock and the EP's {@link SendLock} both, so a
 * send that holds only the latter sees whether requests are outstanding. The receive queue is a
 * {@link RecvRing}: posted under its producer claim, taken by the peer's sends under their
 * {@link SendLock}; the SRQ's share is guarded by the domain lock.
 */
public final class EpQueues {
    private final EmuEp ep;
    private final EmuSrq srq;
    private final RecvRing recvs;
    private final ArrayDeque<WorkRequest> requests = new ArrayDeque<>();
    private final SendLock sendLock = new SendLock();
    /** A completed send and RDMA for the next post to reuse (domain lock held), or null. */
    private WorkRequest.Send spareSend;
    private WorkRequest.Rdma spareRdma;
    private int srqBuffersUsed;
    private long srqBytesUsed;
    private int softHighWatermark = Dat.WATERMARK_INFINITE;
    private int hardHighWatermark = Dat.HW_DEFAULT;
    /** Whether the soft high watermark event is still to be raised for the current setting. */
    private boolean softHighWatermarkArmed;

    /** The IA, whose asynchronous EVD gets the SRQ soft high watermark event. */
    private final EmuIa ia;

    EpQueues(EmuEp ep, EmuIa ia, EmuSrq srq, int maxRecvDtos, int srqSoftHighWatermark) {
        this.ep = ep;
        this.ia = ia;
        this.srq = srq;
        this.recvs = new RecvRing(srq != null ? 0 : maxRecvDtos);
        if (srq != null && srqSoftHighWatermark >= 0) {
            softHighWatermark = srqSoftHighWatermark;
            softHighWatermarkArmed = true;
        }
    }

    /** The lock of the EP's sending side (see {@link SendLock}). */
    public SendLock sendLock() {
        return sendLock;
    }

    /** Whether the EP takes its receives from an SRQ. */
    public boolean hasSrq() {
        return srq != null;
    }

    /** Appends a request (domain lock held), under the send lock so that a lock-free send sees it. */
    void addRequest(WorkRequest wr) {
        sendLock.lock();
        try {
            requests.addLast(wr);
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Keeps {@code wr}, which completed and which nothing refers to any more, for the EP's next post of
     * its kind (domain lock held), so that steady traffic through a link that queues work requests (tcp)
     * allocates none: a send whose RNR retry timer is still armed is not kept (the timer's task holds
     * it), nor a receive of an SRQ, nor a bind or extended DTO. A request is recycled only after its one
     * completion, and reused only by a new post, which makes it new ({@link WorkRequest#reset}).
     */
    void recycle(WorkRequest wr) {
        switch (wr) {
            case WorkRequest.Send s -> {
                if (!s.rnrTimerArmed) {
                    spareSend = s;
                }
            }
            case WorkRequest.Rdma r -> spareRdma = r;
            case WorkRequest.Recv r -> {
                if (srq == null) {
                    recvs.recycle(r);
                }
            }
            default -> {
            }
        }
    }

    /** The spare send for a new post, or null (domain lock held). */
    WorkRequest.Send takeSpareSend() {
        WorkRequest.Send s = spareSend;
        spareSend = null;
        return s;
    }

    /**
     * A spare receive for a new post, or null, taken with the ring's producer side claimed, as a post
     * without the domain lock takes one ({@link #addRecvIfConnected}), which may run meanwhile.
     */
    WorkRequest.Recv takeSpareRecv() {
        recvs.lockProducer();
        try {
            return recvs.takeSpare();
        } finally {
            recvs.unlockProducer();
        }
    }

    /** The spare RDMA for a new post, or null (domain lock held). */
    WorkRequest.Rdma takeSpareRdma() {
        WorkRequest.Rdma r = spareRdma;
        spareRdma = null;
        return r;
    }

    /** The request queue, head first: the next request to process. */
    ArrayDeque<WorkRequest> requests() {
        return requests;
    }

    Endpoint.EpStatus status(EpState state) {
        return new Endpoint.EpStatus(state, recvs.isEmpty(), requests.isEmpty());
    }

    /** Fails INSUFFICIENT_RESOURCES when {@code max} requests are outstanding. */
    void requireRequestSlot(int max) {
        if (requests.size() >= max) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the EP holds " + max + " outstanding requests");
        }
    }

    /**
     * Queues a receive, or fails INSUFFICIENT_RESOURCES when {@code max} receives are posted; the
     * caller checked that the EP is not DISCONNECTED with the producer side claimed, or holds the domain
     * lock (a flush claims the producer side after the EP became DISCONNECTED, so nothing is left behind).
     */
    void addRecv(WorkRequest.Recv r, int max) {
        recvs.lockProducer();
        try {
            addRecvClaimed(r, max);
        } finally {
            recvs.unlockProducer();
        }
    }

    private void addRecvClaimed(WorkRequest.Recv r, int max) {
        if (recvs.holds(max)) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the EP holds " + max + " receives");
        }
        recvs.add(r);
        Counts counts = ep.evds().counts();
        counts.inc(org.jdapl.dat.EpCounter.POST_RECV.ordinal());
        counts.add(org.jdapl.dat.EpCounter.POST_RECV_DATA.ordinal(), r.capacity);
    }

    /** What {@link #addRecvIfConnected} did. */
    enum Posted {
        /** Nothing: the EP is not CONNECTED; the caller takes the domain lock. */
        NOT_CONNECTED,
        /** Queued. */
        QUEUED,
        /** Queued, and a send of the peer waits for a receive: the caller reports it under the domain lock. */
        QUEUED_PEER_WAITS
    }

    /**
     * Checks and queues a receive without the domain lock if the EP is connected: the check of the
     * state and the append happen with the producer side claimed (claimed first, so that its
     * compare-and-set does not wait for the stores that make the receive), which a disconnect's flush claims after the EP
     * became DISCONNECTED, so the receive is flushed or taken, never lost (DISC_02, DISC_08). Whether
     * the peer's head send waits for a receive is read under the claim too, which such a send holds while
     * it looks at the ring and says that it waits ({@link #awaitReceive}): one of the two sees the other.
     */
    Posted addRecvIfConnected(DtoChecks checks, List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags, int max,
                              Link link) {
        recvs.lockProducer();
        try {
            if (ep.state() != EpState.CONNECTED) {
                return Posted.NOT_CONNECTED;
            }
            addRecvClaimed(checks.recv(iov, cookie, flags, recvs.takeSpare()), max);
            return link.awaitsReceive(ep) ? Posted.QUEUED_PEER_WAITS : Posted.QUEUED;
        } finally {
            recvs.unlockProducer();
        }
    }

    /**
     * A send of the peer found no receive here (RNR; the peer's domain lock held): unless a receive is
     * queued by now, {@code waits} marks the send as waiting, with the producer side claimed, so a
     * receive queued without the domain lock either is seen here or sees the mark.
     *
     * @return false if a receive is queued now: the send retries at once
     */
    public boolean awaitReceive(Runnable waits) {
        if (srq != null) {
            waits.run();
            return srq.peek() == null;
        }
        recvs.lockProducer();
        try {
            if (recvs.peek() != null) {
                return false;
            }
            waits.run();
            return true;
        } finally {
            recvs.unlockProducer();
        }
    }

    /** The receive queue's room for {@code max} receives (domain lock held, the EP not connected). */
    void resizeReceives(int max) {
        if (srq != null) {
            return;
        }
        recvs.lockProducer();
        try {
            recvs.resize(max);
        } finally {
            recvs.unlockProducer();
        }
    }

    /** The EP's own receive ring (without an SRQ), whose head the peer's sends take. */
    public RecvRing receives() {
        return recvs;
    }

    /** The receive the next incoming send takes: the EP's first, or its SRQ's first. */
    public WorkRequest.Recv nextReceive() {
        return srq != null ? srq.peek() : recvs.peek();
    }

    /** Takes {@link #nextReceive} off its queue (an SRQ counts it as used by this EP). */
    public void takeReceive() {
        if (srq != null) {
            WorkRequest.Recv r = srq.take();
            srqBuffersUsed++;
            srqBytesUsed += r.capacity;
            checkSoftHighWatermark();
        } else {
            recvs.take();
        }
    }

    /** {@code dat_ep_recv_query}: MODEL_NOT_SUPPORTED without an SRQ. */
    Endpoint.RecvQuery recvQuery() {
        if (srq == null) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                    "dat_ep_recv_query reports SRQ buffer use; this EP has no SRQ");
        }
        return new Endpoint.RecvQuery(srqBuffersUsed, (int) Math.min(Integer.MAX_VALUE, srqBytesUsed));
    }

    /**
     * {@code dat_ep_set_watermark}: sets both watermarks and arms the soft one. The first time the
     * receives the EP took from its SRQ (what {@code dat_ep_recv_query} reports) exceed the soft high
     * watermark, during this call or when the EP takes one, an
     * {@link org.jdapl.dat.EventNumber#ASYNC_SRQ_SOFT_HIGH_WATERMARK} event with the EP and
     * {@link Dat#SRQ_SOFT_HIGH_WATERMARK_EVENT} goes to the IA's asynchronous EVD, once per setting.
     * The hard high watermark is kept only (the provider breaks no connection for it).
     * MODEL_NOT_SUPPORTED without an SRQ; INVALID_PARAMETER below -1 (infinite). Domain lock held.
     *
     * <p>Behaviours: EP_01, EP_02.
     */
    void setWatermark(int soft, int hard) {
        if (srq == null) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "watermarks apply to EPs with an SRQ");
        }
        if (soft < Dat.WATERMARK_INFINITE || hard < Dat.WATERMARK_INFINITE) {
            throw DatException.invalidParameter(2, "watermarks are -1 (infinite) or 0 and more");
        }
        softHighWatermark = soft;
        hardHighWatermark = hard;
        softHighWatermarkArmed = soft != Dat.WATERMARK_INFINITE;
        checkSoftHighWatermark();
    }

    /** EP_01: raises the soft high watermark event once per setting (domain lock held). */
    private void checkSoftHighWatermark() {
        if (softHighWatermarkArmed && srqBuffersUsed > softHighWatermark) {
            softHighWatermarkArmed = false;
            ia.raiseAsync(org.jdapl.dat.EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK, ep,
                    Dat.SRQ_SOFT_HIGH_WATERMARK_EVENT, "the EP took " + srqBuffersUsed
                    + " receive(s) from its SRQ, over its soft high watermark " + softHighWatermark);
        }
    }

    /**
     * Completes every queued request and receive FLUSHED (domain lock held, the link closed, so no send
     * of the peer takes receives any more; the producer side is claimed, so a receive posted without
     * the domain lock is in the ring already or sees the EP DISCONNECTED).
     *
     * <p>Behaviours: DISC_02, DISC_08: every posted DTO and bind completes exactly once, FLUSHED.
     */
    void flush() {
        WorkRequest wr;
        sendLock.lock();
        try {
            while ((wr = requests.pollFirst()) != null) {
                if (wr instanceof WorkRequest.Bind bind) {
                    bind.rmr.revokeIf(bind.binding);
                }
                ep.completeRequest(wr, DtoStatus.FLUSHED, 0);
            }
        } finally {
            sendLock.unlock();
        }
        WorkRequest.Recv r;
        recvs.lockProducer();
        try {
            while ((r = recvs.take()) != null) {
                ep.completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
            }
        } finally {
            recvs.unlockProducer();
        }
    }
}
