package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;

/**
 * The data path of one EP, top to bottom: the checks of a post, the iovec and descriptor arrays
 * (native memory the EP allocates once), the call through the endpoint's ops table
 * ({@code fi_sendv}, {@code fi_recvv}, {@code fi_writev}, {@code fi_readv}) with the DTO's ring slot as
 * its context, and the completion: its event on the queue's EVD (a success with SUPPRESS queues
 * nothing), or FLUSHED for every DTO still live when the connection ends. Callers hold the EP's lock.
 *
 * <p>Behaviours: OBJ_07, OBJ_08, LMR_04, DISC_02, DISC_03, DISC_09.
 */
final class EpData {
    private final OfiEp ep;
    final DtoQueue recv;
    final DtoQueue request;
    private final int recvLimit;
    private final int requestLimit;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment iov;
    private final MemorySegment desc;
    private final MemorySegment rmaIov;
    private final MemorySegment msgRma;

    EpData(OfiEp ep, int id, int recvDepth, int requestDepth) {
        this.ep = ep;
        this.recvLimit = Math.max(recvDepth, 1);
        this.requestLimit = Math.max(requestDepth, 1);
        recv = new DtoQueue(id, false, recvLimit);
        request = new DtoQueue(id, true, requestLimit);
        iov = arena.allocate(16L * OfiIa.MAX_IOV, 8);
        desc = arena.allocate(8L * OfiIa.MAX_IOV, 8);
        rmaIov = arena.allocate(FI_RMA_IOV.size(), 8);
        msgRma = arena.allocate(FI_MSG_RMA.size(), 8);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_MSG_IOV, iov.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_DESC, desc.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV, rmaIov.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV_COUNT, 1);
    }

    void close() {
        arena.close();
    }

    /** Checks the segments of a DTO and fills the iovec and descriptor arrays; the total length. */
    long fill(List<LmrTriplet> segments, int maxIov, MemPriv needed) {
        return fill(ep.ia, ep.pz(), iov, desc, segments, maxIov, needed);
    }

    /**
     * Checks the segments of a DTO against the IA and PZ (an EP's or an SRQ's) and fills the iovec and
     * descriptor arrays {@code iov} and {@code desc}; the total length.
     */
    static long fill(OfiIa ia, OfiPz pz, MemorySegment iov, MemorySegment desc, List<LmrTriplet> segments,
                     int maxIov, MemPriv needed) {
        if (segments == null || segments.size() > maxIov) {
            throw DatException.invalidParameter(2, (segments == null ? "no" : segments.size()) + " segments, at most "
                    + maxIov);
        }
        long total = 0;
        int n = segments.size();
        for (int i = 0; i < n; i++) { // indexed: no iterator
            LmrTriplet t = segments.get(i);
            long base = 0;
            long d = 0;
            if (t.length() > 0) {
                LocalMemoryRegion l = t.lmr();
                if (!(l instanceof OfiLmr lmr) || lmr.ia != ia) {
                    throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_LMR, "not an LMR of this IA");
                }
                if (lmr.freed) {
                    throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the LMR is freed");
                }
                if (lmr.pz != pz) {
                    throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the LMR is of another PZ");
                }
                if (t.offset() + t.length() > lmr.segment.byteSize()) {
                    throw new DatException(DatReturnType.LENGTH_ERROR, "the segment is not within the LMR");
                }
                if (!lmr.privileges.contains(needed)) {
                    throw new DatException(DatReturnType.PRIVILEGES_VIOLATION, "the LMR does not grant " + needed);
                }
                base = lmr.segment.address() + t.offset();
                d = lmr.desc;
            }
            iov.set(ValueLayout.JAVA_LONG, i * 16L + IOV_BASE, base);
            iov.set(ValueLayout.JAVA_LONG, i * 16L + IOV_LEN, t.length());
            desc.set(ValueLayout.JAVA_LONG, i * 8L, d);
            total += t.length();
        }
        return total;
    }

    /** Posts a request DTO (send, RDMA Write, RDMA Read) on the connected endpoint {@code fid}. */
    void postRequest(long fid, DtoOperation op, List<LmrTriplet> segments, long cookie, RmrTriplet remote,
                     Set<CompletionFlag> flags, int maxIov) {
        long total = fill(segments, maxIov, op == DtoOperation.RDMA_READ ? MemPriv.LOCAL_WRITE : MemPriv.LOCAL_READ);
        if (total > ep.ia.maxMsgSize) {
            throw new DatException(DatReturnType.LENGTH_ERROR, total + " bytes exceed the maximum message size");
        }
        if (remote != null && remote.length() < total && op == DtoOperation.RDMA_WRITE) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "the remote segment is shorter than the local ones");
        }
        OfiEvd evd = ep.requestEvd();
        if (evd == null) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_EVD_REQUEST, "the EP has no request EVD");
        }
        if (request.full(requestLimit)) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the request queue is full");
        }
        if (!evd.reserve()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                    "the request EVD could overflow");
        }
        long seq = request.add(cookie, op, total, suppress(flags), null);
        long ctx = request.context(seq);
        int n = segments.size();
        long rc = post(fid, op, n, total, remote, ctx);
        if (rc >= 0) {
            ep.counts.inc(op == DtoOperation.SEND ? EpCounter.POST_SEND
                    : op == DtoOperation.RDMA_WRITE ? EpCounter.POST_WRITE : EpCounter.POST_READ, total);
        }
        if (rc == -Fi.FI_EAGAIN && ep.ia.rdm != null) {
            rc = ep.ia.rdm.retry(evd, () -> post(fid, op, n, total, remote, ctx));
        }
        if (rc < 0) {
            request.undo(seq);
            evd.unreserve();
            if (rc == -Fi.FI_EAGAIN) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the provider's queue is full");
            }
            throw FiErrors.toDat(rc, op.toString());
        }
    }

    private long post(long fid, DtoOperation op, int n, long total, RmrTriplet remote, long ctx) {
        return switch (op) {
            case SEND -> FiCalls.sendv(fid, iov.address(), desc.address(), n, ctx);
            case RDMA_WRITE -> write(fid, n, total, remote, ctx);
            case RDMA_READ -> FiCalls.readv(fid, iov.address(), desc.address(), n, remote.targetAddress(),
                    remote.rmrContext() & 0xffffffffL, ctx);
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    /**
     * An RDMA Write through {@code fi_writemsg} with {@code FI_DELIVERY_COMPLETE}: it completes only
     * once the target has placed it (and fails if the target refuses it: a freed key, bounds,
     * rights), as a DAT RDMA Write completion means.
     */
    private long write(long fid, int n, long total, RmrTriplet remote, long ctx) {
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, remote.targetAddress());
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_LEN, total);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_KEY, remote.rmrContext() & 0xffffffffL);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_IOV_COUNT, n);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, ctx);
        return FiCalls.writemsg(fid, msgRma.address(), Fi.FI_COMPLETION | Fi.FI_DELIVERY_COMPLETE);
    }

    /** Posts a receive; without an endpoint ({@code fid} 0) it waits in its slot for one. */
    void postRecv(long fid, List<LmrTriplet> segments, long cookie, Set<CompletionFlag> flags, int maxIov) {
        long total = fill(segments, maxIov, MemPriv.LOCAL_WRITE);
        OfiEvd evd = ep.recvEvd();
        if (evd == null) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_EVD_RECV, "the EP has no receive EVD");
        }
        if (recv.full(recvLimit)) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the receive queue is full");
        }
        if (!evd.reserve()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                    "the receive EVD could overflow");
        }
        long seq = recv.add(cookie, DtoOperation.RECEIVE, total, suppress(flags), fid == 0 ? List.copyOf(segments) : null);
        ep.counts.inc(EpCounter.POST_RECV, total);
        if (fid != 0) {
            long rc = FiCalls.recvv(fid, iov.address(), desc.address(), segments.size(), recv.context(seq));
            if (rc < 0) {
                recv.undo(seq);
                evd.unreserve();
                throw rc == -Fi.FI_EAGAIN
                        ? new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the provider's receive queue is full")
                        : FiErrors.toDat(rc, "fi_recvv");
            }
        }
    }

    /** Posts the receives that waited for the endpoint {@code fid}. */
    void postDeferred(long fid, int maxIov) {
        for (int s : recv.liveSlots()) {
            Object d = recv.deferred[s];
            if (d instanceof List<?> list) {
                @SuppressWarnings("unchecked")
                List<LmrTriplet> segs = (List<LmrTriplet>) list;
                fill(segs, maxIov, MemPriv.LOCAL_WRITE);
                long rc = FiCalls.recvv(fid, iov.address(), desc.address(), segs.size(), recv.context(recv.seqOf(s)));
                if (rc < 0) {
                    throw FiErrors.toDat(rc, "fi_recvv");
                }
                recv.deferred[s] = null;
            }
        }
    }

    private static boolean suppress(Set<CompletionFlag> flags) {
        return flags != null && (flags.contains(CompletionFlag.SUPPRESS) || flags.contains(CompletionFlag.UNSIGNALLED));
    }

    /** A completion from a CQ; false if it named no live DTO. An error other than a flush returns true too. */
    boolean completed(long context, int err, long len) {
        DtoQueue q = DtoQueue.isRequest(context) ? request : recv;
        int s = q.slot(DtoQueue.seq(context));
        if (s < 0) {
            return false;
        }
        DtoStatus status = err == 0 ? DtoStatus.SUCCESS : FiErrors.dtoStatus(err);
        long length = q.request ? (err == 0 ? q.lengths[s] : 0) : len;
        if (!q.request && err == 0) {
            ep.counts.inc(EpCounter.RECV, len);
        }
        emit(q, s, status, length);
        return true;
    }

    /**
     * A receive completed with remote CQ data: it was consumed by an RDMA Write with immediate data
     * ({@link OfiExtensions}), whose length and immediate data the CQ data carries; false if it named
     * no live receive. Behaviours: EXT_05, EXT_06.
     */
    boolean completedWithData(long context, long cqData) {
        int s = recv.slot(DtoQueue.seq(context));
        if (DtoQueue.isRequest(context) || s < 0) {
            return false;
        }
        long length = cqData >>> 32;
        ep.counts.inc(EpCounter.RECV_RDMA_IMM, length);
        recv.extended[s] = ExtensionType.RDMA_WRITE_IMMED_DATA;
        emit(recv, s, DtoStatus.SUCCESS, length, (int) cqData);
        return true;
    }

    private void emit(DtoQueue q, int s, DtoStatus status, long length) {
        emit(q, s, status, length, 0);
    }

    private void emit(DtoQueue q, int s, DtoStatus status, long length, int immediateData) {
        OfiEvd evd = q.request ? ep.requestEvd() : ep.recvEvd();
        long cookie = q.cookies[s];
        DtoOperation op = q.ops[s];
        ExtensionType extended = q.extended[s];
        boolean quiet = status == DtoStatus.SUCCESS && q.suppressed[s];
        q.retire(s);
        if (evd == null) {
            return;
        }
        if (quiet) {
            evd.unreserve();
        } else if (extended != null) {
            OfiExtensions.emit(evd, ep, cookie, status, length, extended, immediateData);
        } else {
            evd.enqueueDto(ep, cookie, status, length, op, true);
        }
    }

    /** Completes every live DTO FLUSHED, oldest first, receives after requests. */
    void flush() {
        for (DtoQueue q : new DtoQueue[] {request, recv}) {
            for (int s : q.liveSlots()) {
                emit(q, s, DtoStatus.FLUSHED, 0);
            }
        }
    }

    /** Gives back the EVD room of every live DTO without events (the EP is freed). */
    void discard() {
        for (DtoQueue q : new DtoQueue[] {request, recv}) {
            OfiEvd evd = q.request ? ep.requestEvd() : ep.recvEvd();
            for (int s : q.liveSlots()) {
                q.retire(s);
                if (evd != null) {
                    evd.unreserve();
                }
            }
        }
    }

    /** A receive posted to a DISCONNECTED EP: it completes FLUSHED at once. */
    void flushRecvNow(List<LmrTriplet> segments, long cookie, Set<CompletionFlag> flags, int maxIov) {
        postRecv(0, segments, cookie, flags, maxIov);
        flush();
    }

    /** The RMR bind event, queued at once on the request EVD (room is set aside first). */
    void bindCompleted(OfiRmr rmr, long cookie, boolean suppressed) {
        OfiEvd evd = ep.requestEvd();
        if (evd == null || suppressed) {
            return;
        }
        if (!evd.reserve()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                    "the request EVD could overflow");
        }
        evd.enqueueReserved(new DatEvent.RmrBindCompletion(evd, rmr, cookie, DtoStatus.SUCCESS));
    }

    boolean requestIdle() {
        return request.outstanding() == 0;
    }

    boolean recvIdle() {
        return recv.outstanding() == 0;
    }
}
