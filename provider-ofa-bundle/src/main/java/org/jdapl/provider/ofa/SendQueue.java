package org.jdapl.provider.ofa;

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
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofa.verbs.Structs.IbvMwBind;
import org.jdapl.provider.ofa.verbs.Structs.IbvSendWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsContext;

/**
 * An EP's send queue: the request posts (Send, Send with invalidate, RDMA Read, RDMA Write) and the
 * binds of memory windows, each built in native memory the queue allocates once and posted with
 * {@code ibv_post_send} through {@code ibv_context.ops}; its ring and completions are
 * {@link WorkQueue}'s. Sends and RDMA Writes up to {@link #INLINE_MAX} bytes go inline. A post on an
 * EP that is not CONNECTED fails INVALID_STATE; a full queue or CQ fails
 * INSUFFICIENT_RESOURCES. Guarded by the EP's lock.
 *
 * <p>Behaviours: OBJ_04, OBJ_07, OBJ_08, DISC_07, DISC_16.
 */
final class SendQueue extends WorkQueue {
    /**
     * DISC_02: the unsignalled requests at the end of the queue (DAT_COMPLETION_SUPPRESS_FLAG, as
     * OFED's dtest posts its last messages before it disconnects) that completed before the queue
     * pair went to the error state have no work completion that could retire them (a flushed one
     * has its own, which retires them). Called once the connection manager is done with an ended
     * connection (TIMEWAIT_EXIT or its time limit, long after the flushes of the error transition
     * were polled): they are retired as the successes they were, so that the terminal event is not
     * held back for ever. Nothing happens while a request the consumer is told about is outstanding
     * (its flush is still to come). Under the EP's lock.
     *
     * <p>Behaviours: DISC_02.
     */
    void retireUnsignalledTail() {
        long tail = ring.tail();
        long head = tail + ring.outstanding();
        for (long s = tail; s < head; s++) {
            if (ring.reportAt(s)) {
                return;
            }
        }
        if (head > tail) {
            retireQuietly(head - 1);
        }
    }

    /** What {@link #signalLast} did. */
    enum LastSignal {
        /** Nothing is outstanding, or the last request is signalled (the drain may be posted now). */
        SIGNALLED,
        /** The queue is full: a signalled request in it completes first, then this is called again. */
        LATER,
        /** The drain could not be posted (no CQ room, or the post failed). */
        FAILED
    }

    /**
     * DISC_04: a graceful disconnect waits for every outstanding request, but requests posted with
     * DAT_COMPLETION_SUPPRESS_FLAG are unsignalled and have no work completion of their own. If the
     * last request posted is unsignalled, a signalled zero-length RDMA Write (no segments, no key:
     * IBA C9-88, nothing happens at the peer) goes after it, as verbs consumers drain a send queue:
     * on an RC queue pair it completes after every request before it, so its completion retires
     * them all (their suppressed successes report nothing) and reports nothing itself
     * ({@link WorkRing#KIND_DRAIN}). If the queue is full, a signalled request is among the last
     * half (one is forced every half queue) and this is tried again at its completion. Under the
     * EP's lock.
     *
     * <p>Behaviours: DISC_04.
     */
    LastSignal signalLast() {
        if (ring.outstanding() == 0 || ring.unsignalledRun == 0) {
            return LastSignal.SIGNALLED;
        }
        if (ring.full()) {
            return LastSignal.LATER;
        }
        if (!covered && !room.reserve()) {
            return LastSignal.FAILED;
        }
        long wr = sendWrArg;
        DataPathMemory.putLong(wr + SEND_WR_ID, ring.nextWrId());
        DataPathMemory.putLong(wr + SEND_SG_LIST, sendSgesArg);
        DataPathMemory.putInt(wr + SEND_NUM_SGE, 0);
        DataPathMemory.putInt(wr + SEND_OPCODE, Verbs.WR_RDMA_WRITE);
        DataPathMemory.putInt(wr + SEND_FLAGS, Verbs.SEND_SIGNALED);
        DataPathMemory.putInt(wr + SEND_INVALIDATE_RKEY, 0);
        DataPathMemory.putLong(wr + SEND_REMOTE_ADDR, 0);
        DataPathMemory.putInt(wr + SEND_RKEY, 0);
        int r = verbs.postSend(qpAddress, sendWrArg, badWrArg);
        if (r != 0) {
            postFailed("ibv_post_send (drain)", r, covered ? null : room);
            return LastSignal.FAILED;
        }
        ring.unsignalledRun = 0;
        ring.add(0, DtoOperation.RDMA_WRITE, 0, WorkRing.KIND_DRAIN, false, null);
        return LastSignal.SIGNALLED;
    }

    /*
     * The work request members the posts write, as plain offsets: a post writes them with stores that
     * the JIT compiles into it (CField's accessors are calls where the post is compiled first).
     */
    private static final long SEND_WR_ID = IbvSendWr.WR_ID.offset();
    private static final long SEND_SG_LIST = IbvSendWr.SG_LIST.offset();
    private static final long SEND_NUM_SGE = IbvSendWr.NUM_SGE.offset();
    private static final long SEND_OPCODE = IbvSendWr.OPCODE.offset();
    private static final long SEND_FLAGS = IbvSendWr.SEND_FLAGS.offset();
    private static final long SEND_INVALIDATE_RKEY = IbvSendWr.INVALIDATE_RKEY.offset();
    private static final long SEND_REMOTE_ADDR = IbvSendWr.REMOTE_ADDR.offset();
    private static final long SEND_RKEY = IbvSendWr.RKEY.offset();
    private static final long SGE_LENGTH = IbvSge.LENGTH.offset();
    private static final long ATOMIC_REMOTE_ADDR = IbvSendWr.ATOMIC_REMOTE_ADDR.offset();
    private static final long ATOMIC_COMPARE_ADD = IbvSendWr.ATOMIC_COMPARE_ADD.offset();
    private static final long ATOMIC_SWAP = IbvSendWr.ATOMIC_SWAP.offset();
    private static final long ATOMIC_RKEY = IbvSendWr.ATOMIC_RKEY.offset();

    /** The inline data asked of each queue pair: sends and RDMA Writes up to this size are copied at post. */
    static final int INLINE_MAX = 64;
    /** The bytes the inline buffer has beyond {@link #INLINE_MAX}, which {@link #copySmall} may write. */
    static final int INLINE_SLACK = Long.BYTES - 1;

    private final MemorySegment sendWr;
    private final MemorySegment mwBind;
    /** The addresses of {@link #sendWr} and of {@link #sges}, as the downcalls and the work request take them. */
    private final long sendWrArg;
    private final long sendSgesArg;
    /**
     * The addresses of the one gather entry of inline data and of the buffer it names, where small
     * sends and RDMA Writes are gathered before they are posted inline.
     */
    private final long inlineSgeArg;
    private final long inlineDataArg;
    /** The queue pair's inline data limit (0: none). */
    private int inlineLimit;
    private final int maxIov;
    /** The EP's largest Send and RDMA sizes (its attributes are fixed while the queue exists). */
    private final long maxMessageSize;
    private final long maxRdmaSize;

    SendQueue(OfaEp ep, EpBinding binding) {
        super(ep, binding, WorkRing.SEND, binding.attributes().maxRequestDtos(), binding.attributes().maxRequestIov(),
                binding.requestEvd());
        EpAttributes attributes = binding.attributes();
        maxIov = attributes.maxRequestIov();
        maxMessageSize = attributes.maxMessageSize();
        maxRdmaSize = attributes.maxRdmaSize();
        sendWr = VerbsContext.dataPathView(arena.allocate(IbvSendWr.S.size(), 8));
        sendWrArg = sendWr.address();
        sendSgesArg = sges.address();
        MemorySegment inlineData = VerbsContext.dataPathView(arena.allocate(INLINE_MAX + INLINE_SLACK, 8));
        MemorySegment inlineSgeEntry = VerbsContext.dataPathView(arena.allocate(IbvSge.S.size(), 8));
        inlineSgeArg = inlineSgeEntry.address();
        inlineDataArg = inlineData.address();
        // A work request's chain never changes (a bind zeroes the request, so it stays 0); the inline
        // entry always names inlineData (its key is not used): only its length changes.
        IbvSendWr.NEXT.setLong(sendWr, 0);
        IbvSge.ADDR.setLong(inlineSgeEntry, inlineData.address());
        IbvSge.LKEY.setInt(inlineSgeEntry, 0);
        mwBind = arena.allocate(IbvMwBind.S.size(), 8);
    }

    @Override
    void attach(QueuePair qp, int generation) {
        super.attach(qp, generation);
        inlineLimit = qp.inlineLimit();
    }

    /**
     * A request post: checks, the work request in the queue's native buffer, {@code ibv_post_send},
     * and the ring entry. Every check is made under the lock, after the one of the handle, so that a
     * freed EP fails INVALID_HANDLE whatever else is wrong and the handle is read once. The common
     * path is short enough for the JIT to compile it into the caller; failures are built in methods
     * of their own.
     */
    void post(int opcode, DtoOperation op, List<LmrTriplet> iov, long cookie, RmrTriplet remote,
              Set<CompletionFlag> flags, int invalidate) {
        lock.lock();
        try {
            ep.live();
            checkRequest(iov, flags, op);
            long total = prepareSges(iov, iov.size());
            checkRequestLength(op, total, remote);
            int bits = CompletionBits.of(flags);
            boolean suppress = (bits & CompletionBits.SUPPRESS) != 0;
            boolean signal = !suppress || ring.unsignalledRun >= ring.capacity / 2;
            if (!covered && !room.reserve()) {
                throw cqFull("request", room);
            }
            writeSendWr(opcode, iov, total, sendFlags(bits, signal), invalidate, remote);
            int r = verbs.postSend(qpAddress, sendWrArg, badWrArg);
            if (r != 0) {
                throw postFailed("ibv_post_send", r, covered ? null : room);
            }
            ring.unsignalledRun = signal ? 0 : ring.unsignalledRun + 1;
            ring.add(cookie, op, total, dtoKind(), !suppress, null);
            counts.incWithData(op == DtoOperation.SEND ? EpCounter.POST_SEND
                    : op == DtoOperation.RDMA_WRITE ? EpCounter.POST_WRITE : EpCounter.POST_READ, total);
        } finally {
            lock.unlock();
        }
    }

    /**
     * A post of one of OFED's extended requests: an atomic ({@code opcode}
     * IBV_WR_ATOMIC_FETCH_AND_ADD or IBV_WR_ATOMIC_CMP_AND_SWP: one local segment of 8 bytes, which
     * the original value lands in, and 8 bytes at an aligned remote address) or an RDMA Write with
     * immediate data ({@code immediate} in {@code imm_data}). Checked as {@link #post}; the ring
     * entry is {@link WorkRing#KIND_EXT} with the extension type, so that its completion (or flush)
     * is an extended one. Behaviours: EXT_01, EXT_02, EXT_03, EXT_05, EXT_06, EXT_07.
     */
    void postExtended(int opcode, ExtensionType type, List<LmrTriplet> iov, long cookie, RmrTriplet remote,
                      long compareAdd, long swap, int immediate, Set<CompletionFlag> flags) {
        boolean atomic = opcode != Verbs.WR_RDMA_WRITE_WITH_IMM;
        DtoOperation op = atomic ? DtoOperation.RDMA_READ : DtoOperation.RDMA_WRITE;
        lock.lock();
        try {
            ep.live();
            if (remote == null) {
                throw DatException.invalidParameter(atomic ? 5 : 4, "null RMR triplet");
            }
            checkRequest(iov, flags, op);
            long total = prepareSges(iov, iov.size());
            if (atomic) {
                checkAtomic(total, remote);
            } else {
                checkRequestLength(op, total, remote);
            }
            int bits = CompletionBits.of(flags);
            boolean suppress = (bits & CompletionBits.SUPPRESS) != 0;
            boolean signal = !suppress || ring.unsignalledRun >= ring.capacity / 2;
            if (!covered && !room.reserve()) {
                throw cqFull("request", room);
            }
            writeSendWr(opcode, iov, total, sendFlags(bits, signal), immediate, atomic ? null : remote);
            if (atomic) {
                long wr = sendWrArg;
                DataPathMemory.putLong(wr + ATOMIC_REMOTE_ADDR, remote.targetAddress());
                DataPathMemory.putLong(wr + ATOMIC_COMPARE_ADD, compareAdd);
                DataPathMemory.putLong(wr + ATOMIC_SWAP, swap);
                DataPathMemory.putInt(wr + ATOMIC_RKEY, remote.rmrContext());
            }
            int r = verbs.postSend(qpAddress, sendWrArg, badWrArg);
            if (r != 0) {
                throw postFailed("ibv_post_send", r, covered ? null : room);
            }
            ring.unsignalledRun = signal ? 0 : ring.unsignalledRun + 1;
            ring.add(cookie, op, total, WorkRing.KIND_EXT, !suppress, type);
            if (atomic) {
                counts.inc(type == ExtensionType.FETCH_AND_ADD ? EpCounter.POST_FETCH_ADD : EpCounter.POST_CMP_SWAP);
            } else {
                counts.incWithData(EpCounter.POST_WRITE_IMM, total);
            }
        } finally {
            lock.unlock();
        }
    }

    /** An atomic's operands: 8 local bytes, 8 remote bytes at an 8-byte aligned address (EXT_01). */
    private static void checkAtomic(long total, RmrTriplet remote) {
        if (total != Long.BYTES) {
            throw DatException.invalidParameter(3, "an atomic's local segment has " + total + " bytes, not 8");
        }
        if (remote.length() != Long.BYTES || (remote.targetAddress() & (Long.BYTES - 1)) != 0) {
            throw DatException.invalidParameter(5, "an atomic's target must be 8 bytes at an 8-byte aligned "
                    + "address (" + remote.length() + " bytes at " + Long.toHexString(remote.targetAddress()) + ")");
        }
    }

    /**
     * Writes the work request of a post into {@link #sendWr}: the segments {@link #prepareSges}
     * wrote, or their bytes inline where they fit and their memory is still there. Under the lock.
     */
    private void writeSendWr(int opcode, List<LmrTriplet> iov, long total, int sendFlags, int invalidate,
                             RmrTriplet remote) {
        int n = iov.size();
        int entries = n;
        int flags = sendFlags;
        // Sends and RDMA Writes (with or without immediate data) go inline; reads and atomics never do.
        if (total <= inlineLimit && total > 0 && (opcode < Verbs.WR_RDMA_READ || opcode == Verbs.WR_SEND_WITH_INV)
                && !filled.namedFreedLmr()
                && gatherInline(iov, n)) {
            flags |= Verbs.SEND_INLINE;
            entries = 1;
        }
        long wr = sendWrArg;
        DataPathMemory.putLong(wr + SEND_WR_ID, ring.nextWrId());
        DataPathMemory.putLong(wr + SEND_SG_LIST, entries == n ? sendSgesArg : inlineSge(total));
        DataPathMemory.putInt(wr + SEND_NUM_SGE, entries);
        DataPathMemory.putInt(wr + SEND_OPCODE, opcode);
        DataPathMemory.putInt(wr + SEND_FLAGS, flags);
        DataPathMemory.putInt(wr + SEND_INVALIDATE_RKEY, invalidate);
        if (remote != null) {
            DataPathMemory.putLong(wr + SEND_REMOTE_ADDR, remote.targetAddress());
            DataPathMemory.putInt(wr + SEND_RKEY, remote.rmrContext());
        }
    }

    /** The checks of a request post before its segments are looked at (under the lock). */
    private void checkRequest(List<LmrTriplet> iov, Set<CompletionFlag> flags, DtoOperation op) {
        if (iov == null || flags == null) {
            throw DatException.invalidParameter(2, "null segment list or completion flags");
        }
        if (iov.size() > maxIov) {
            throw DatException.invalidParameter(2, iov.size() + " segments exceed the EP's " + maxIov);
        }
        if (evd == null) {
            throw DatException.invalidState(DatReturnSubtype.NO_SUBTYPE, "the EP has no request EVD");
        }
        EpState state = ep.state;
        if (state != EpState.CONNECTED) {
            throw notConnected(state, op);
        }
        if (ring.full()) {
            throw queueFull("request", ring);
        }
    }

    /** The {@code ibv_send_flags} of a request's completion flags ({@link CompletionBits}). */
    private static int sendFlags(int completionBits, boolean signal) {
        int sendFlags = signal ? Verbs.SEND_SIGNALED : 0;
        if ((completionBits & CompletionBits.SOLICITED_WAIT) != 0) {
            sendFlags |= Verbs.SEND_SOLICITED;
        }
        if ((completionBits & CompletionBits.BARRIER_FENCE) != 0) {
            sendFlags |= Verbs.SEND_FENCE;
        }
        return sendFlags;
    }

    private static DatException notConnected(EpState state, DtoOperation op) {
        return state.invalid(op == DtoOperation.SEND ? "dat_ep_post_send" : op == DtoOperation.RDMA_READ
                ? "dat_ep_post_rdma_read" : "dat_ep_post_rdma_write");
    }

    private void checkRequestLength(DtoOperation op, long total, RmrTriplet remote) {
        long max = op == DtoOperation.SEND ? maxMessageSize : maxRdmaSize;
        if (total > max) {
            throw DatException.invalidParameter(2, total + " bytes exceed the EP's maximum of " + max);
        }
        if (remote != null && op == DtoOperation.RDMA_READ && remote.length() != total) {
            throw DatException.invalidParameter(4, "the RDMA Read reads " + remote.length() + " bytes into "
                    + total + " local bytes");
        }
    }

    /**
     * Copies the segments (already checked) into the inline buffer, through their MemorySegments so
     * that memory released by the consumer is never read. False (and the request goes out with its
     * keys) if a segment's memory is no longer there or belongs to a confined arena of another thread.
     */
    private boolean gatherInline(List<LmrTriplet> iov, int n) {
        long at = 0;
        for (int i = 0; i < n; i++) {
            LmrTriplet t = iov.get(i);
            long length = t.length();
            if (length == 0) {
                continue;
            }
            MemorySegment from = ((OfaLmr) t.lmr()).segment();
            try {
                copySmall(from, t.offset(), inlineDataArg + at, length);
            } catch (IllegalStateException | WrongThreadException unusable) {
                return false; // memory released, or confined to another thread
            }
            at += length;
        }
        return true;
    }

    /**
     * Copies at most {@link #INLINE_MAX} bytes of {@code from} to the provider's buffer at {@code to},
     * eight bytes at a time with the segment's checked loads, the last few too where the segment has
     * eight bytes there: the buffer then takes up to {@link #INLINE_SLACK} bytes more than
     * {@code length}, which the gather list does not name (a loop or a split for the last few bytes
     * costs more than they do). Cheaper for such sizes than {@code MemorySegment.copy}, whose checks
     * and copy routine are calls that the JIT keeps out of line. Throws as the segment's accessors
     * throw, before it writes anything of that load.
     */
    static void copySmall(MemorySegment from, long fromOffset, long to, long length) {
        long done = 0;
        for (; done + Long.BYTES <= length; done += Long.BYTES) {
            DataPathMemory.putLong(to + done, from.get(ValueLayout.JAVA_LONG_UNALIGNED, fromOffset + done));
        }
        if (done < length) {
            long at = fromOffset + done;
            if (at + Long.BYTES <= from.byteSize()) {
                DataPathMemory.putLong(to + done, from.get(ValueLayout.JAVA_LONG_UNALIGNED, at));
            } else {
                copyLastBytes(from, at, to + done, length - done);
            }
        }
    }

    /** The last {@code n} bytes of a segment, which has fewer than eight bytes from {@code at}. */
    private static void copyLastBytes(MemorySegment from, long at, long to, long n) {
        for (long k = 0; k < n; k++) {
            DataPathMemory.putByte(to + k, from.get(ValueLayout.JAVA_BYTE, at + k));
        }
    }

    /** The address of the one scatter/gather entry of inline data, with its length set. */
    private long inlineSge(long total) {
        DataPathMemory.putInt(inlineSgeArg + SGE_LENGTH, (int) total);
        return inlineSgeArg;
    }

    /**
     * {@code dat_rmr_bind} of a memory window on this queue ({@link OfaRmr#postBind} writes and posts
     * it); the bind completes from the CQ in order with the requests before it. Returns the
     * new rmr_context (0 for an unbind).
     *
     * <p>Behaviours: DISC_02.
     */
    int bindWindow(OfaRmr rmr, OfaLmr lmr, long offset, long length, int access, long cookie,
                   Set<CompletionFlag> flags) {
        lock.lock();
        try {
            ep.live();
            EpState state = ep.state;
            if (state != EpState.CONNECTED) {
                throw state.invalid("dat_rmr_bind");
            }
            if (ring.full()) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the request queue is full");
            }
            if (evd == null || !covered && !room.reserve()) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                        "no room in the request EVD's completion queue");
            }
            OfaLmr previous;
            synchronized (rmr) {
                previous = rmr.boundLmr;
            }
            boolean report = flags == null || !flags.contains(CompletionFlag.SUPPRESS);
            if (rmr.scope == RmrScope.PZ && length == 0 && previous == null) {
                // Nothing is bound: the unbind completes at once.
                if (!covered) {
                    room.unreserve();
                }
                if (report) {
                    evd.enqueue(new DatEvent.RmrBindCompletion(evd, rmr, cookie, DtoStatus.SUCCESS));
                }
                return 0;
            }
            int r = rmr.postBind(ep.queuePair(), mwBind, sendWr, badWrArg, ring.nextWrId(), lmr, previous, offset,
                    length, access);
            if (r != 0) {
                throw postFailed("ibv_bind_mw", r, covered ? null : room);
            }
            int context = rmr.posted();
            ring.unsignalledRun = 0;
            ring.add(cookie, DtoOperation.SEND, length, WorkRing.KIND_BIND, report, rmr);
            return length > 0 ? context : 0;
        } finally {
            lock.unlock();
        }
    }
}
