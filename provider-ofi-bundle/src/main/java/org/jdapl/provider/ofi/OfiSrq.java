package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.SrqState;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;

/**
 * An SRQ over a libfabric shared receive context ({@code fi_srx_context}): its EPs' endpoints are
 * bound to the context ({@code fi_ep_bind}), the receives are posted to it with {@code fi_recvv},
 * each with its slot in the SRQ's ring ({@link DtoQueue}) as its context, and libfabric hands each to
 * the endpoint a message arrives on, in posting order. The completion is written to that endpoint's
 * receive CQ: every EP of an SRQ has a CQ of its own for its receives ({@link EpSrq}), so that the
 * event names the EP that took the receive. The context has no fixed size in libfabric; the SRQ's
 * {@code max_recv_dtos} is a limit of jdapl's, within the context's size (the provider's receive
 * queue depth, at most {@link #MAX_DEPTH}). On an IA over RDM endpoints there is no context: the SRQ
 * lends its receives to its EPs' data endpoints ({@link RdmSrq}).
 *
 * <p>The low watermark ({@code dat_srq_set_lw}, or the attribute at creation; 0 is none) is armed when
 * it is set: the first time the receives on the SRQ drop below it, during the call or when an EP
 * takes one, an {@link EventNumber#ASYNC_SRQ_LOW_WATERMARK} event naming the SRQ with
 * {@link Dat#SRQ_LOW_WATERMARK_EVENT} goes to the IA's asynchronous EVD, and the watermark is disarmed
 * until it is set again. A receive counts as taken when its completion is read.
 *
 * <p>Behaviours: SRQ_01, SRQ_02, SRQ_03.
 */
final class OfiSrq extends OfiObject implements SharedReceiveQueue {
    static final int MAX_DEPTH = 4096;

    final OfiPz pz;
    /** The shared receive context (0 on an RDM IA: {@link #rdm}). */
    final long srx;
    /** On an IA over RDM endpoints, the receives lent to the EPs' data endpoints instead of a context; else null. */
    final RdmSrq rdm;
    private final int capacity;
    private final int maxRecvIov;
    private final DtoQueue queue;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment iov;
    private final MemorySegment desc;
    final AtomicInteger users = new AtomicInteger();
    private int maxRecvDtos;
    private int lowWatermark;
    private boolean lowWatermarkArmed;

    OfiSrq(OfiIa ia, OfiPz pz, SrqAttributes a) {
        super(ia, HandleType.SRQ);
        if (a == null) {
            throw DatException.invalidParameter(2, "no SRQ attributes");
        }
        capacity = Math.min(ia.maxQueue, MAX_DEPTH);
        if (a.maxRecvDtos() > capacity) {
            throw DatException.invalidParameter(2, "max_recv_dtos " + a.maxRecvDtos() + " over the provider's " + capacity);
        }
        if (a.maxRecvIov() > ia.iovLimit) {
            throw DatException.invalidParameter(2, "max_recv_iov " + a.maxRecvIov() + " over the provider's " + ia.iovLimit);
        }
        this.pz = pz;
        this.maxRecvDtos = a.maxRecvDtos();
        this.maxRecvIov = a.maxRecvIov();
        this.lowWatermark = a.lowWatermark();
        this.lowWatermarkArmed = lowWatermark > 0;
        int id = (int) ia.nextId();
        queue = new DtoQueue(id, false, capacity);
        iov = arena.allocate(16L * OfiIa.MAX_IOV, 8);
        desc = arena.allocate(8L * OfiIa.MAX_IOV, 8);
        if (ia.rdm != null) {
            srx = 0;
            rdm = new RdmSrq(iov, desc);
            pz.users.incrementAndGet();
            ia.added(this);
            return;
        }
        rdm = null;
        try {
            MemorySegment attr = arena.allocate(FI_RX_ATTR.size(), 8);
            attr.set(ValueLayout.JAVA_LONG, RX_CAPS, Fi.FI_MSG | Fi.FI_RECV);
            attr.set(ValueLayout.JAVA_LONG, RX_SIZE, capacity);
            attr.set(ValueLayout.JAVA_LONG, RX_IOV_LIMIT, ia.iovLimit);
            srx = FiCalls.srxContext(ia.domain, attr.address(), id);
        } catch (FiException e) {
            arena.close();
            throw FiErrors.toDat(e);
        }
        pz.users.incrementAndGet();
        ia.added(this);
    }

    static OfiSrq of(OfiIa ia, SharedReceiveQueue srq) {
        if (!(srq instanceof OfiSrq s) || s.ia != ia || s.freed) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_SRQ, "not a live SRQ of this IA");
        }
        return s;
    }

    @Override
    public synchronized SrqParam query() {
        live();
        return new SrqParam(ia, SrqState.OPERATIONAL, pz, maxRecvDtos, maxRecvIov, lowWatermark, queue.outstanding(), 0);
    }

    @Override
    public void free() {
        live();
        if (users.get() > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_SRQ_IN_USE, users.get() + " EP(s) use the SRQ");
        }
        destroy();
        ia.removed(this);
    }

    /** Closes the context; the receives still on it are reported to nobody (no EP owns them). */
    @Override
    void destroy() {
        synchronized (this) {
            if (freed) {
                return;
            }
            freed = true;
            if (srx != 0) {
                OfiIa.closeQuietly(srx);
            }
            arena.close();
        }
        pz.users.decrementAndGet();
    }

    @Override
    public synchronized void postRecv(List<LmrTriplet> segments, long cookie) {
        live();
        long total = EpPosts.fill(ia, pz, iov, desc, segments, maxRecvIov, MemPriv.LOCAL_WRITE);
        if (queue.outstanding() >= maxRecvDtos || queue.full(capacity)) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_SRQ,
                    "the SRQ holds " + maxRecvDtos + " receives");
        }
        long seq = queue.add(cookie, DtoOperation.RECEIVE, total, false, null);
        if (rdm != null) {
            rdm.posted(queue.context(seq), segments.size());
            return;
        }
        long rc = FiCalls.recvv(srx, iov.address(), desc.address(), segments.size(), queue.context(seq));
        if (rc < 0) {
            queue.undo(seq);
            throw rc == -Fi.FI_EAGAIN
                    ? new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_SRQ,
                    "the shared receive context is full")
                    : FiErrors.toDat(rc, "fi_recvv");
        }
    }

    /**
     * An EP read the completion of the receive of {@code context}: retires it and returns its cookie
     * in {@code out[0]} and its capacity in {@code out[1]}; false if it names no live receive.
     * SRQ_01: the receives left may cross the low watermark.
     */
    synchronized boolean take(long context, long[] out, EpSrq by) {
        int s = queue.slot(DtoQueue.seq(context));
        if (s < 0 || (rdm != null && !rdm.taken(context, by))) {
            return false;
        }
        out[0] = queue.cookies[s];
        out[1] = queue.lengths[s];
        queue.retire(s);
        checkLowWatermark();
        if (rdm != null) {
            rdm.lend();
        }
        return true;
    }

    /** RDM: the data endpoint {@code fid} of {@code ep} opened ({@code fid} != 0) or closes (0); see {@link RdmSrq}. */
    synchronized void borrower(EpSrq ep, long fid) {
        if (fid != 0) {
            rdm.open(ep, fid);
        } else {
            rdm.closing(ep);
        }
    }

    /** RDM: the receive {@code context} lent to {@code ep} was cancelled by its endpoint's close. */
    synchronized void giveBack(long context, EpSrq ep) {
        rdm.giveBack(context, ep);
    }

    /** RDM: the endpoint of {@code ep} is closed; what is still lent to it returns to the SRQ. */
    synchronized void returnAll(EpSrq ep) {
        rdm.returnAll(ep);
    }

    /** SRQ_01, SRQ_02: the event once per setting, when fewer receives than the watermark remain. */
    private void checkLowWatermark() {
        if (lowWatermarkArmed && queue.outstanding() < lowWatermark) {
            lowWatermarkArmed = false;
            ia.asyncEvd.enqueue(new DatEvent.AsyncError(ia.asyncEvd, EventNumber.ASYNC_SRQ_LOW_WATERMARK, this,
                    Dat.SRQ_LOW_WATERMARK_EVENT, queue.outstanding() + " receive(s) on the SRQ, below its low watermark "
                    + lowWatermark));
        }
    }

    @Override
    public synchronized void resize(int newMax) {
        live();
        if (newMax < 1 || newMax > capacity || newMax < queue.outstanding()) {
            throw DatException.invalidParameter(2, "SRQ size " + newMax + " is not in " + Math.max(1, queue.outstanding())
                    + ".." + capacity);
        }
        maxRecvDtos = newMax;
    }

    /** SRQ_03: a low watermark within 0..max_recv_dtos, armed by the setting (SRQ_02). */
    @Override
    public synchronized void setLowWatermark(int lw) {
        live();
        if (lw < 0 || lw > maxRecvDtos) {
            throw DatException.invalidParameter(2, "low watermark " + lw + " is not in 0.." + maxRecvDtos);
        }
        lowWatermark = lw;
        lowWatermarkArmed = lw > 0;
        checkLowWatermark();
    }
}
