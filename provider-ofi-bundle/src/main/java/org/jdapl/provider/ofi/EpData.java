package org.jdapl.provider.ofi;

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
import org.jdapl.dat.EpState;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofi.fabric.Fi;

/**
 * The data path of one EP, top to bottom: the checks of a post, the call through the endpoint's ops
 * table ({@link EpPosts}: the iovec and descriptor arrays, {@code fi_sendv}, {@code fi_recvv},
 * {@code fi_writemsg}, {@code fi_readv}) with the DTO's ring slot as its context, and the completion:
 * its event on the queue's EVD (a success with SUPPRESS queues nothing; an RDMA Write with immediate data and the receive it consumed complete as extended DTOs,
 * {@link OfiExtensions}), or FLUSHED for every DTO still live when the connection ends. On a
 * connection with receive credits ({@link MsgCredits}) a send or an RDMA Write with immediate data
 * without a credit, and every request after it, waits in its slot until {@link #pump} posts it.
 * Callers hold the EP's lock.
 *
 * <p>Behaviours: OBJ_07, OBJ_08, LMR_04, DISC_02, DISC_03, DISC_05, DISC_09, EXT_05, EXT_06, EXT_07, EXT_09.
 */
final class EpData {
    private final OfiEp ep;
    final DtoQueue recv;
    final DtoQueue request;
    private final int recvLimit;
    private final int requestLimit;
    private final EpPosts posts;
    /** The connection's receive credits (MSG endpoints), null without. */
    MsgCredits credits;
    /** The sequence number of the first request waiting for a credit, -1 if none waits. */
    private long heldFrom = -1;
    /**
     * New requests wait in their slots and none is posted: the transport under an RDM connection ended
     * and the connection is about to end (rxm would open a new transport connection for them,
     * {@link RdmConnection#cancelled}).
     */
    boolean stalled;

    EpData(OfiEp ep, int id, int recvDepth, int requestDepth) {
        this.ep = ep;
        this.recvLimit = Math.max(recvDepth, 1);
        this.requestLimit = Math.max(requestDepth, 1);
        recv = new DtoQueue(id, false, recvLimit);
        request = new DtoQueue(id, true, requestLimit);
        posts = new EpPosts(ep.ia);
    }

    void close() {
        posts.close();
    }

    /** Checks the segments of a DTO against the EP's IA and PZ and fills the post's arrays; the total length. */
    long fill(List<LmrTriplet> segments, int maxIov, MemPriv needed) {
        return posts.fill(ep.pz(), segments, maxIov, needed);
    }

    /** Posts a request DTO (send, RDMA Write, RDMA Read) on the connected endpoint {@code fid}. */
    void postRequest(long fid, DtoOperation op, List<LmrTriplet> segments, long cookie, RmrTriplet remote,
                     Set<CompletionFlag> flags, int maxIov) {
        postRequest(fid, op, segments, cookie, remote, flags, maxIov, null, 0);
    }

    /**
     * Posts a request DTO on the connected endpoint {@code fid}; {@code extended} is
     * RDMA_WRITE_IMMED for an RDMA Write with immediate data ({@code op} RDMA_WRITE,
     * {@link OfiExtensions}), else null. A send and an RDMA Write with immediate data each consume a
     * receive at the peer, so each takes a receive credit; without one it waits, and every request
     * after it waits behind it, in order. Behaviours: DISC_02, DISC_05, EXT_05, EXT_06.
     */
    void postRequest(long fid, DtoOperation op, List<LmrTriplet> segments, long cookie, RmrTriplet remote,
                     Set<CompletionFlag> flags, int maxIov, ExtensionType extended, int immediateData) {
        long total = fill(segments, maxIov, op == DtoOperation.RDMA_READ ? MemPriv.LOCAL_WRITE : MemPriv.LOCAL_READ);
        if (total > ep.ia.maxMsgSize || (extended != null && total > OfiExtensions.maxWriteImmediate(ep.ia))) {
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
        boolean suppress = suppress(flags);
        long seq = request.add(cookie, op, total, suppress, null);
        int slot = request.slot(seq);
        request.silent[slot] = silent(suppress, op, extended);
        request.silentRun = request.silent[slot] ? request.silentRun + 1 : 0;
        request.extended[slot] = extended;
        request.immediates[slot] = immediateData;
        if (heldFrom >= 0 || stalled || (credits != null && takesCredit(slot) && !credits.maySend())) {
            request.deferred[slot] = List.copyOf(segments); // a LocalIov's list is not copied
            request.remotes[slot] = remote;
            if (heldFrom < 0) {
                heldFrom = seq;
                ep.ia.held.holding(ep, true);
            }
            countPost(slot);
            if (credits != null && credits.maySend()) {
                // The credit came between the check above and the mark: the progress that placed it
                // may have pumped before it saw this EP holding, and nothing else would wake it.
                pump(fid);
            }
            return;
        }
        long ctx = request.context(seq);
        int n = segments.size();
        long rc = post(fid, slot, n, remote, ctx);
        if (rc == -Fi.FI_EAGAIN && ep.ia.rdm != null && !ep.ia.rdm.named) {
            rc = ep.ia.rdm.retry(evd, () -> post(fid, slot, n, remote, ctx));
        }
        if (rc == -Fi.FI_EAGAIN && ep.ia.rdm != null) {
            // shm: the provider takes the request once the peer's progress has read this
            // endpoint's name, or its one segmented transfer to the peer at a time has been received;
            // rxm: once its connection to the peer is up, which the peer's progress completes too:
            // the post is accepted, the request waits in order and the progress posts it (pump).
            request.deferred[slot] = List.copyOf(segments);
            request.remotes[slot] = remote;
            heldFrom = seq;
            ep.ia.held.holding(ep, true);
            countPost(slot);
            return;
        }
        if (rc < 0) {
            request.undo(seq);
            evd.unreserve();
            if (rc == -Fi.FI_EAGAIN) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the provider's queue is full");
            }
            throw FiErrors.toDat(rc, extended != null ? "dat_ib_post_rdma_write_immed" : op.toString());
        }
        countPost(slot);
        if (credits != null && takesCredit(slot)) {
            credits.sent();
        }
    }

    /**
     * Whether a request is posted unsignalled: a send or an RDMA Write (not with immediate data) with
     * DAT_COMPLETION_SUPPRESS_FLAG on a MSG endpoint ({@link EpPosts#selective}) whose graceful
     * disconnect can drain it ({@link MsgCredits#drains}), unless half the request queue is
     * unsignalled already: then it is signalled (and still reports no success), so that its completion
     * retires the ones before it, as the verbs provider forces one every half queue.
     */
    private boolean silent(boolean suppress, DtoOperation op, ExtensionType extended) {
        return suppress && posts.selective && extended == null && op != DtoOperation.RDMA_READ
                && credits != null && credits.drains() && request.silentRun < requestLimit / 2;
    }

    /**
     * A graceful disconnect waits for every request, and an unsignalled one at the end of the queue
     * has no completion of its own: a signalled write of no consequence to the peer goes after it
     * ({@link MsgCredits#drain}), whose completion retires it and every one before it and reports
     * nothing itself. Not while requests wait for a credit (the last of them goes first: this is
     * called again at every completion) or the queue is full (a signalled request is in its last
     * half). The EP's lock is held. Behaviours: DISC_04.
     */
    void drainSilentTail(long fid) {
        if (fid == 0 || heldFrom >= 0 || !request.newestSilent() || request.full(requestLimit)) {
            return;
        }
        long seq = request.add(0, DtoOperation.RDMA_WRITE, 0, true, null);
        int s = request.slot(seq);
        request.internal[s] = true;
        request.silentRun = 0;
        if (credits.drain(fid, request.context(seq), posts.placed()) < 0) {
            request.undo(seq); // tried again at the next completion
        }
    }

    /**
     * Whether the request queue is full on a MSG endpoint, where unsignalled requests may hold it
     * until a completion in the request EVD's CQ is read ({@link OfiEp#postRequest}).
     */
    boolean requestsFullUnread() {
        return posts.selective && request.full(requestLimit);
    }

    /** Whether the request in {@code slot} consumes a receive at the peer: a send, an RDMA Write with immediate data. */
    private boolean takesCredit(int slot) {
        return request.ops[slot] == DtoOperation.SEND || request.extended[slot] == ExtensionType.RDMA_WRITE_IMMED;
    }

    /** Counts a request the consumer posted (DAT_COUNTERS). Behaviours: EXT_09. */
    private void countPost(int slot) {
        DtoOperation op = request.ops[slot];
        EpCounter c = request.extended[slot] != null ? EpCounter.POST_WRITE_IMM
                : op == DtoOperation.SEND ? EpCounter.POST_SEND
                : op == DtoOperation.RDMA_WRITE ? EpCounter.POST_WRITE : EpCounter.POST_READ;
        ep.counts.inc(c, request.lengths[slot]);
    }

    /**
     * Posts the requests that wait for a credit, in order, while there are credits, and a count of
     * receives that is still due to the peer (the EP's lock is held); the number of requests posted.
     * The EP leaves the IA's waiting set once nothing waits.
     */
    int pump(long fid) {
        int posted = 0;
        boolean announced = credits == null || fid == 0 || credits.announce(fid);
        while (heldFrom >= 0 && fid != 0 && !stalled) {
            int s = request.slot(heldFrom);
            if (s < 0 || !(request.deferred[s] instanceof List<?> l)) {
                heldFrom = -1;
                break;
            }
            @SuppressWarnings("unchecked")
            List<LmrTriplet> segments = (List<LmrTriplet>) l;
            DtoOperation op = request.ops[s];
            boolean credit = credits != null && takesCredit(s);
            if (credit && !credits.maySend()) {
                return posted;
            }
            long rc;
            try {
                fill(segments, OfiIa.MAX_IOV, op == DtoOperation.RDMA_READ ? MemPriv.LOCAL_WRITE : MemPriv.LOCAL_READ);
                rc = post(fid, s, segments.size(), request.remotes[s], request.context(heldFrom));
            } catch (DatException e) {
                rc = Long.MIN_VALUE; // an LMR freed while the request waited
            }
            if (rc == -Fi.FI_EAGAIN) {
                return posted;
            }
            request.deferred[s] = null;
            request.remotes[s] = null;
            long seq = heldFrom;
            heldFrom = DtoQueue.next(heldFrom);
            if (heldFrom == request.nextSeq()) {
                heldFrom = -1;
            }
            if (rc < 0) {
                emit(request, request.slot(seq), rc == Long.MIN_VALUE ? DtoStatus.LOCAL_PROTECTION
                        : FiErrors.dtoStatus((int) -rc), 0);
            } else {
                posted++;
                if (credit) {
                    credits.sent();
                }
            }
        }
        if ((heldFrom < 0 || stalled) && announced) {
            ep.ia.held.holding(ep, false);
        }
        if (heldFrom < 0 && posted > 0 && ep.conn.state() == EpState.DISCONNECT_PENDING) {
            drainSilentTail(fid); // the last of them may be unsignalled
        }
        return posted;
    }

    /**
     * Hands the request in {@code slot} (its segments filled in) to libfabric; a send on an RDM
     * endpoint whose peer does not count its receives (an EP on an SRQ) asks delivery-complete.
     */
    private long post(long fid, int slot, int n, RmrTriplet remote, long ctx) {
        return posts.post(fid, request.ops[slot], request.extended[slot], n, request.lengths[slot], remote,
                request.immediates[slot], ctx, !request.silent[slot], credits != null && credits.peerCounts());
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
            long rc = posts.recv(fid, segments.size(), recv.context(seq));
            if (rc < 0) {
                recv.undo(seq);
                evd.unreserve();
                throw rc == -Fi.FI_EAGAIN
                        ? new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the provider's receive queue is full")
                        : FiErrors.toDat(rc, "fi_recvv");
            }
            if (credits != null && !credits.received(fid)) {
                ep.ia.held.holding(ep, true);
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
                long rc = posts.recv(fid, segs.size(), recv.context(recv.seqOf(s)));
                if (rc < 0) {
                    throw FiErrors.toDat(rc, "fi_recvv");
                }
                recv.deferred[s] = null;
                if (credits != null) {
                    credits.received(fid);
                }
            }
        }
    }

    private static boolean suppress(Set<CompletionFlag> flags) {
        return flags != null && (flags.contains(CompletionFlag.SUPPRESS) || flags.contains(CompletionFlag.UNSIGNALLED));
    }

    /** A completion from a CQ; false if it named no live DTO. An error other than a flush returns true too. */
    boolean completed(long context, int err, long len) {
        DtoQueue q = DtoQueue.isRequest(context) ? request : recv;
        boolean writeHalf = OfiExtensions.isWriteHalf(context);
        int s = q.slot(DtoQueue.seq(writeHalf ? OfiExtensions.dtoOf(context) : context));
        if (s < 0 || (writeHalf && q.extended[s] != ExtensionType.RDMA_WRITE_IMMED)) {
            return false; // a DTO completed already, or the write half of one that failed to post
        }
        DtoStatus status = err == 0 ? DtoStatus.SUCCESS : FiErrors.dtoStatus(err, !q.request);
        long length = q.request ? (err == 0 ? q.lengths[s] : 0) : len;
        if (!q.request && err == 0 && len > q.lengths[s]) {
            status = DtoStatus.LOCAL_LENGTH; // the message ran into the overflow buffer
            length = q.lengths[s];
        }
        if (!q.request && err == 0) {
            ep.counts.inc(EpCounter.RECV, len);
        }
        if (q.request) {
            for (int t; (t = q.oldestSilentBefore(s)) >= 0; ) {
                emit(q, t, DtoStatus.SUCCESS, q.lengths[t]); // it succeeded, unsignalled: no event
            }
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
        if (q.internal[s]) {
            q.retire(s); // the drain of a graceful disconnect: no event, and it took no room on the EVD
            return;
        }
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

    /** Completes every live DTO FLUSHED (those waiting for a credit too), oldest first, receives after requests. */
    void flush() {
        heldFrom = -1;
        stalled = false;
        ep.ia.held.holding(ep, false);
        for (DtoQueue q : new DtoQueue[] {request, recv}) {
            for (int s : q.liveSlots()) {
                emit(q, s, DtoStatus.FLUSHED, 0);
            }
        }
    }

    /** Gives back the EVD room of every live DTO without events (the EP is freed). */
    void discard() {
        heldFrom = -1;
        stalled = false;
        ep.ia.held.holding(ep, false);
        for (DtoQueue q : new DtoQueue[] {request, recv}) {
            OfiEvd evd = q.request ? ep.requestEvd() : ep.recvEvd();
            for (int s : q.liveSlots()) {
                boolean internal = q.internal[s];
                q.retire(s);
                if (evd != null && !internal) {
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
