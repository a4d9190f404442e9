package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.VerbsContext;

/**
 * What an EP's send queue ({@link SendQueue}) and receive queue ({@link RecvQueue}) share: the ring
 * of outstanding work requests ({@link WorkRing}), the scatter/gather array the posts fill, the CQ
 * room the queue holds on its EVD, and the completions of its work requests. Every posted DTO
 * completes exactly once: a completion retires its ring entry and every unsignalled one before it;
 * the usual case, a successful DTO on a connection that is not ending, is kept short (the JIT
 * compiles it into the poll), {@link #completedOther} handles errors, binds and the end of a
 * connection. Guarded by the EP's lock.
 *
 * <p>Behaviours: DISC_02, DISC_03, DISC_09.
 */
abstract class WorkQueue {
    private static final long SGE_BYTES = IbvSge.S.size();
    private static final long SGE_ADDR = IbvSge.ADDR.offset();
    private static final long SGE_LENGTH = IbvSge.LENGTH.offset();
    private static final long SGE_LKEY = IbvSge.LKEY.offset();

    final OfaEp ep;
    final OfaIa ia;
    /** The EP's PZ, which every LMR a post names must be of (fixed while the queue exists). */
    private final OfaPz pz;
    final EpLock lock;
    /** The EP's counters (DCNT_EP_*), written under its lock. */
    final Counts counts;
    final WorkRing ring;
    /** The EVD whose CQ takes this queue's completions, or null. */
    final OfaEvd evd;
    /** The room of {@link #evd}'s CQ (null without an EVD). */
    final CqRoom room;
    /** Whether this is the send queue (its completions report the length posted). */
    private final boolean send;
    /** The device's verbs, whose data-path downcalls the posts make. */
    final VerbsContext verbs;
    final Arena arena = Arena.ofShared();
    /** The scatter/gather array the posts fill, and which list it holds. */
    final MemorySegment sges;
    final FilledSges filled = new FilledSges();
    /** The address of an 8-byte slot for the failed work request the post downcalls return. */
    final long badWrArg;
    /** The address of the queue pair, as the data-path downcalls take it (0 without one). */
    long qpAddress;
    /**
     * Whether the EVD set aside room for every completion the queue can have outstanding
     * ({@link CqRoom#reserveQueue}): its posts then reserve nothing each. Set at create.
     */
    boolean covered;

    WorkQueue(OfaEp ep, EpBinding binding, long tag, int depth, int maxIov, OfaEvd evd) {
        this.ep = ep;
        this.ia = ep.ia;
        this.pz = binding.pz();
        this.lock = ep.lock;
        this.counts = ep.counts();
        this.ring = new WorkRing(tag, Math.max(1, depth));
        this.evd = evd;
        this.room = evd == null ? null : evd.room();
        this.send = tag == WorkRing.SEND;
        this.verbs = ia.device().context;
        // The buffers every post writes need no liveness check: the arena is closed at dat_ep_free after
        // the EP was marked freed under its lock, and every post checks that under the lock first.
        this.sges = VerbsContext.dataPathView(arena.allocate(SGE_BYTES * Math.max(1, maxIov), 8));
        this.badWrArg = arena.allocate(8, 8).address();
    }

    /** Takes a new queue pair (at create and reset): the ring starts again for its generation. */
    void attach(QueuePair qp, int generation) {
        qpAddress = qp.address();
        ring.reset(generation);
    }

    /** At {@code dat_ep_create} (IA lock held): takes the CQ room of the whole queue if the EVD has it. */
    void cover() {
        covered = room != null && room.reserveQueue(ring.capacity);
    }

    /** Gives back the CQ room the queue held (its queue pair destroyed and CQ polled since). */
    void uncover() {
        if (room != null) {
            room.unreserve(covered ? ring.capacity : ring.outstanding());
        }
        covered = false;
    }

    int outstanding() {
        return ring.outstanding();
    }

    void freeNative() {
        arena.close();
    }

    /**
     * The scatter/gather entries of a post in {@link #sges}: as they are if the array already holds
     * the list, checked, else filled by {@link #fillSges}. Returns the bytes they add up to.
     */
    final long prepareSges(List<LmrTriplet> iov, int n) {
        int frees = ia.lmrFrees();
        if (filled.holds(iov, frees)) {
            return filled.total();
        }
        filled.forget();
        return fillSges(iov, n, frees);
    }

    /**
     * Fills the entries and records them in {@link #filled}, checked when the IA had freed
     * {@code frees} LMRs. A freed LMR keeps its (now invalid) key so that the device reports the
     * protection error; an LMR of another IA or PZ, or a range outside the LMR, fails
     * PROTECTION_VIOLATION here.
     *
     * <p>Behaviours: LMR_04.
     */
    private long fillSges(List<LmrTriplet> iov, int n, int frees) {
        long total = 0;
        boolean freed = false;
        for (int i = 0; i < n; i++) {
            LmrTriplet t = iov.get(i);
            OfaLmr l = checkedLmr(t, i);
            long at = i * SGE_BYTES;
            long length = t.length();
            sges.set(ValueLayout.JAVA_LONG_UNALIGNED, at + SGE_ADDR, l == null ? 0L : l.segment().address() + t.offset());
            sges.set(ValueLayout.JAVA_INT_UNALIGNED, at + SGE_LENGTH, (int) length);
            sges.set(ValueLayout.JAVA_INT_UNALIGNED, at + SGE_LKEY, l == null ? 0 : l.lkey());
            if (l != null) {
                freed |= l.isFreed();
            }
            total += length;
        }
        filled.filled(iov, frees, total, freed);
        return total;
    }

    /** The LMR of segment {@code i}, or null for an empty segment; PROTECTION_VIOLATION if it is not usable. */
    private OfaLmr checkedLmr(LmrTriplet t, int i) {
        if (t == null) {
            throw DatException.invalidParameter(2, "null segment " + i);
        }
        if (t.length() == 0) {
            return null;
        }
        if (t.lmr() instanceof OfaLmr l && l.ia == ia && l.pz == pz
                && t.offset() + t.length() <= l.segment().byteSize()) {
            return l;
        }
        throw badSegment(t, i);
    }

    private DatException badSegment(LmrTriplet t, int i) {
        if (!(t.lmr() instanceof OfaLmr l) || l.ia != ia) {
            return new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i + " names no LMR of this IA");
        }
        if (l.pz != pz) {
            return new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i + " names an LMR of another PZ");
        }
        return new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i + " (" + t.offset() + "+"
                + t.length() + ") exceeds its LMR of " + l.segment().byteSize() + " bytes");
    }

    /** The ring entry kind of a DTO whose segments {@link #filled} describes. */
    final byte dtoKind() {
        return filled.namedFreedLmr() ? WorkRing.KIND_DTO_FREED_LMR : WorkRing.KIND_DTO;
    }

    static DatException queueFull(String which, WorkRing ring) {
        return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                "the " + which + " queue holds " + ring.capacity + " outstanding DTOs");
    }

    static DatException cqFull(String which, CqRoom room) {
        return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                "the " + which + " EVD's completion queue is full (" + room.capacity() + " entries)");
    }

    /** A failed post's error, after giving back the CQ room it reserved on {@code reservedOn} (if not null). */
    static DatException postFailed(String what, int errno, CqRoom reservedOn) {
        if (reservedOn != null) {
            reservedOn.unreserve();
        }
        if (errno == Errno.ENOMEM) {
            return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    what + ": the queue is full");
        }
        return new DatException(DatReturnType.INTERNAL_ERROR, DatReturnSubtype.NO_SUBTYPE,
                what + " failed: errno " + errno);
    }

    /**
     * A work completion of this queue, {@code wc} (from a CQ poll; the CQ's poll lock is held), for
     * the request {@code wrId}: retires the entries it completes and queues the event.
     */
    final void completed(OfaEvd cqEvd, long wc, long wrId) {
        lock.lock();
        try {
            if (ep.isFreed()) {
                return;
            }
            long seq = ring.sequenceOf(wrId);
            if (seq < 0) {
                return;
            }
            long meta = ring.metaAt(seq);
            int status = WorkCompletion.status(wc);
            if (status != 0 || WorkRing.kindOf(meta) != WorkRing.KIND_DTO || ep.ending
                    || !send && WorkCompletion.withImmediate(wc)) {
                completedOther(cqEvd, seq, status, wc);
                return;
            }
            long cookie = ring.cookieAt(seq);
            retire(cqEvd, seq);
            if (!send) {
                counts.incWithData(EpCounter.RECV, WorkCompletion.byteLen(wc));
            }
            if (WorkRing.reportsSuccess(meta)) {
                cqEvd.dtoCompleted(ep, cookie, send ? WorkRing.lengthOf(meta) : WorkCompletion.byteLen(wc),
                        WorkRing.opOf(meta), WorkCompletion.invalidatedRkey(wc));
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The event of a successful receive that carries immediate data (EXT_05): an RDMA Write with
     * immediate data that consumed it (its length the bytes the write placed), or a message with
     * immediate data. Behaviours: EXT_05, EXT_06.
     */
    static DatEvent.ExtendedDtoCompletion immediate(OfaEvd cqEvd, OfaEp ep, long cookie, long wc) {
        return new DatEvent.ExtendedDtoCompletion(cqEvd, ep, cookie, DtoStatus.SUCCESS, WorkCompletion.byteLen(wc),
                WorkCompletion.immediateKind(wc), WorkCompletion.immediateData(wc), null);
    }

    /**
     * Counts a successful receive that took the long way: RECV, RECV_IMM (a message with immediate
     * data) or RECV_RDMA_IMM (an RDMA Write with immediate data that consumed it), with its bytes.
     * Behaviours: EXT_09.
     */
    static void countReceive(Counts counts, long wc) {
        EpCounter c = !WorkCompletion.withImmediate(wc) ? EpCounter.RECV
                : WorkCompletion.immediateKind(wc) == ExtensionType.RDMA_WRITE_IMMED_DATA ? EpCounter.RECV_RDMA_IMM
                : EpCounter.RECV_IMM;
        counts.incWithData(c, WorkCompletion.byteLen(wc));
    }

    /** Retires the entries through {@code seq} without a completion (their CQ room is the queue's EVD's). */
    final void retireQuietly(long seq) {
        if (evd != null) {
            retire(evd, seq);
        } else {
            ring.retireThrough(seq);
        }
    }

    /** Retires the ring's entries through {@code seq}, and their CQ room unless the queue is covered. */
    private void retire(OfaEvd cqEvd, long seq) {
        int retired = (int) (seq - ring.tail() + 1);
        ring.retireThrough(seq);
        if (!covered) {
            room.unreserve(retired); // completions come on the queue's own EVD
        }
    }

    /** {@link #completed} for a failed request, a bind, or a connection that is ending. Under the lock. */
    private void completedOther(OfaEvd cqEvd, long seq, int status, long wc) {
        long cookie = ring.cookieAt(seq);
        DtoOperation op = ring.opAt(seq);
        byte kind = ring.kindAt(seq);
        boolean report = ring.reportAt(seq);
        long length = ring.lengthAt(seq);
        Object subject = ring.subjectAt(seq);
        retire(cqEvd, seq);
        DtoStatus st = Completions.status(status, op == DtoOperation.RECEIVE, kind == WorkRing.KIND_DTO_FREED_LMR);
        if (st == DtoStatus.SUCCESS && op == DtoOperation.RECEIVE) {
            countReceive(counts, wc);
        }
        if (kind == WorkRing.KIND_DRAIN) {
            // The provider's own request: the consumer's requests before it have their own events.
        } else if (kind == WorkRing.KIND_BIND) {
            OfaRmr rmr = (OfaRmr) subject;
            if (st != DtoStatus.SUCCESS) {
                rmr.bindFailed();
            }
            if (st != DtoStatus.SUCCESS || report) {
                cqEvd.enqueue(new DatEvent.RmrBindCompletion(cqEvd, rmr, cookie,
                        st == DtoStatus.SUCCESS ? DtoStatus.SUCCESS
                                : st == DtoStatus.FLUSHED ? DtoStatus.FLUSHED : DtoStatus.RMR_OPERATION_FAILED));
            }
        } else if (kind == WorkRing.KIND_EXT) {
            if (st != DtoStatus.SUCCESS || report) {
                cqEvd.enqueue(new DatEvent.ExtendedDtoCompletion(cqEvd, ep, cookie, st,
                        st == DtoStatus.SUCCESS ? length : 0, (ExtensionType) subject, 0, null));
            }
        } else if (st == DtoStatus.SUCCESS && op == DtoOperation.RECEIVE && WorkCompletion.withImmediate(wc)) {
            cqEvd.enqueue(immediate(cqEvd, ep, cookie, wc));
        } else if (st != DtoStatus.SUCCESS || report) {
            long transferred = st != DtoStatus.SUCCESS ? 0
                    : op == DtoOperation.RECEIVE ? WorkCompletion.byteLen(wc) : length;
            cqEvd.enqueue(new DatEvent.DtoCompletion(cqEvd, ep, cookie, st, transferred, op,
                    WorkCompletion.invalidatedRkey(wc)));
        }
        ep.connection().completedOther(st);
    }
}
