package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.provider.ofa.verbs.Structs.IbvRecvWr;
import org.jdapl.provider.ofa.verbs.VerbsContext;

/**
 * An EP's receive queue: {@code dat_ep_post_recv} ({@code ibv_post_recv} through
 * {@code ibv_context.ops}, a work request the queue allocates once), its ring and completions
 * ({@link WorkQueue}), and the completions of SRQ receives the EP consumed. Receives may be posted
 * before a connection (the queue pair is in INIT); a receive posted to a DISCONNECTED EP completes
 * FLUSHED, after any flush still under way. Guarded by the EP's lock.
 *
 * <p>Behaviours: OBJ_07, DISC_12, DISC_13.
 */
final class RecvQueue extends WorkQueue {
    private static final long RECV_WR_ID = IbvRecvWr.WR_ID.offset();
    private static final long RECV_NUM_SGE = IbvRecvWr.NUM_SGE.offset();

    private final long recvWrArg;
    private final int maxIov;
    /** The EP's largest message (its attributes are fixed while the queue exists). */
    private final long maxMessageSize;
    /** Receives posted after the connection ended and before the terminal event: flushed just before it. */
    private final List<Long> lateReceives = new ArrayList<>();
    /** The EP's SRQ, or null: its receives are then this queue's. */
    private final OfaSrq srq;

    RecvQueue(OfaEp ep, EpBinding binding) {
        super(ep, binding, WorkRing.RECV, binding.attributes().maxRecvDtos(), binding.attributes().maxRecvIov(),
                binding.srq() == null ? binding.recvEvd() : null);
        srq = binding.srq();
        maxIov = binding.attributes().maxRecvIov();
        maxMessageSize = binding.attributes().maxMessageSize();
        MemorySegment recvWr = VerbsContext.dataPathView(arena.allocate(IbvRecvWr.S.size(), 8));
        recvWrArg = recvWr.address();
        // A receive's chain and gather list never change: only its wr_id and entry count do.
        IbvRecvWr.NEXT.setLong(recvWr, 0);
        IbvRecvWr.SG_LIST.setPointer(recvWr, sges);
    }

    /** {@code dat_ep_post_recv}; every check under the lock, as for {@link SendQueue#post}. */
    void post(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        lock.lock();
        try {
            ep.live();
            checkRecv(iov, flags);
            int n = iov.size();
            long total = prepareSges(iov, n);
            if (total > maxMessageSize) {
                throw DatException.invalidParameter(2, total + " bytes exceed the EP's maximum message size");
            }
            EpState state = ep.state;
            if (state == EpState.DISCONNECTED) {
                afterDisconnect(cookie);
                return;
            }
            if (qpAddress == 0) {
                throw state.invalid("dat_ep_post_recv (the EP has no queue pair before its request is accepted)");
            }
            if (ring.full()) {
                throw queueFull("receive", ring);
            }
            if (!covered && !room.reserve()) {
                throw cqFull("receive", room);
            }
            DataPathMemory.putLong(recvWrArg + RECV_WR_ID, ring.nextWrId());
            DataPathMemory.putInt(recvWrArg + RECV_NUM_SGE, n);
            int r = verbs.postRecv(qpAddress, recvWrArg, badWrArg);
            if (r != 0) {
                throw postFailed("ibv_post_recv", r, covered ? null : room);
            }
            ring.add(cookie, DtoOperation.RECEIVE, total, dtoKind(), true, null);
            counts.incWithData(EpCounter.POST_RECV, total);
        } finally {
            lock.unlock();
        }
    }

    /** The checks of {@code dat_ep_post_recv} before its segments are looked at (under the lock). */
    private void checkRecv(List<LmrTriplet> iov, Set<CompletionFlag> flags) {
        if (iov == null || flags == null) {
            throw DatException.invalidParameter(2, "null segment list or completion flags");
        }
        if (srq != null) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE,
                    "the EP takes its receives from an SRQ (dat_srq_post_recv)");
        }
        if (iov.size() > maxIov) {
            throw DatException.invalidParameter(2, iov.size() + " segments exceed the EP's " + maxIov);
        }
        if (evd == null) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE, "the EP has no receive EVD");
        }
    }

    /** A receive posted after the connection ended: the queue pair is in the error state, it is flushed. */
    private void afterDisconnect(long cookie) {
        // Flushed after those before it: at once if the terminal event is out, else just before it.
        if (ep.connection().terminalQueued()) {
            flushed(cookie);
        } else {
            lateReceives.add(cookie);
        }
    }

    /** Just before the terminal event: the receives posted since the connection ended complete FLUSHED. */
    void flushLate() {
        for (long cookie : lateReceives) {
            flushed(cookie);
        }
        lateReceives.clear();
    }

    private void flushed(long cookie) {
        evd.enqueue(new DatEvent.DtoCompletion(evd, ep, cookie, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0));
    }

    /** A completion of an SRQ receive this EP consumed (poll lock held). */
    void srqCompleted(OfaEvd cqEvd, long wc, long wrId) {
        if (srq == null) {
            return;
        }
        long cookie = srq.complete(wrId);
        int status = WorkCompletion.status(wc);
        if (cookie == -1 && status == 0) {
            return;
        }
        lock.lock();
        try {
            if (ep.isFreed()) {
                return;
            }
            DtoStatus st = Completions.status(status);
            if (st == DtoStatus.SUCCESS) {
                countReceive(counts, wc);
            }
            if (st == DtoStatus.SUCCESS && WorkCompletion.withImmediate(wc)) {
                cqEvd.enqueue(immediate(cqEvd, ep, cookie, wc));
                return;
            }
            cqEvd.enqueue(new DatEvent.DtoCompletion(cqEvd, ep, cookie, st,
                    st == DtoStatus.SUCCESS ? WorkCompletion.byteLen(wc) : 0, DtoOperation.RECEIVE,
                    WorkCompletion.invalidatedRkey(wc)));
            if (st != DtoStatus.SUCCESS && st != DtoStatus.FLUSHED) {
                ep.connection().srqFailed();
            }
        } finally {
            lock.unlock();
        }
    }
}
