package org.jdapl.provider.emu;

import java.util.ArrayDeque;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;

/**
 * The two work queues of one EP (guarded by the IA's domain lock): the request queue (sends, RDMA
 * Reads and Writes, RMR binds), which the EP's link processes in posting order, and the receive
 * queue, or the EP's share of its SRQ with the use {@code dat_ep_recv_query} reports and the
 * watermarks {@code dat_ep_set_watermark} sets.
 */
final class EpQueues {
    private final EmuEp ep;
    private final EmuSrq srq;
    private final ArrayDeque<WorkRequest.Recv> recvs = new ArrayDeque<>();
    private final ArrayDeque<WorkRequest> requests = new ArrayDeque<>();
    private int srqBuffersUsed;
    private long srqBytesUsed;
    private int softHighWatermark = Dat.WATERMARK_INFINITE;
    private int hardHighWatermark = Dat.HW_DEFAULT;

    EpQueues(EmuEp ep, EmuSrq srq) {
        this.ep = ep;
        this.srq = srq;
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

    /** Fails INSUFFICIENT_RESOURCES when {@code max} receives are posted. */
    void requireRecvSlot(int max) {
        if (recvs.size() >= max) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the EP holds " + max + " receives");
        }
    }

    void addRecv(WorkRequest.Recv r) {
        recvs.addLast(r);
    }

    /** The receive the next incoming send takes: the EP's first, or its SRQ's first. */
    WorkRequest.Recv nextReceive() {
        return srq != null ? srq.peek() : recvs.peekFirst();
    }

    /** Takes {@link #nextReceive} off its queue (an SRQ counts it as used by this EP). */
    void takeReceive() {
        if (srq != null) {
            WorkRequest.Recv r = srq.take();
            srqBuffersUsed++;
            srqBytesUsed += r.capacity;
        } else {
            recvs.pollFirst();
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
     * {@code dat_ep_set_watermark}: the values are kept with the EP. DAT 2.0 defines no event for an
     * EP's share of its SRQ crossing them ({@code DAT_EVENT_NUMBER} has none, and neither has
     * {@link org.jdapl.dat.EventNumber}), so nothing is raised; providers use them as hints.
     * MODEL_NOT_SUPPORTED without an SRQ; INVALID_PARAMETER below -1 (infinite).
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
    }

    /** Behaviours: DISC_02, DISC_08: every posted DTO and bind completes exactly once, FLUSHED. */
    void flush() {
        WorkRequest wr;
        while ((wr = requests.pollFirst()) != null) {
            if (wr instanceof WorkRequest.Bind bind) {
                bind.rmr.revokeIf(bind.binding);
            }
            ep.completeRequest(wr, DtoStatus.FLUSHED, 0);
        }
        WorkRequest.Recv r;
        while ((r = recvs.pollFirst()) != null) {
            ep.completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
        }
    }
}
