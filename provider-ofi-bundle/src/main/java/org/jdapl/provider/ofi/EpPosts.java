package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiInfo;

/**
 * The native side of one EP's posts ({@link EpData} keeps the rings, the credit hold and the
 * completions): the iovec and descriptor arrays and the {@code fi_msg_rma} (native memory the EP
 * allocates once), the checks that fill them from a DTO's segments, and the calls through the
 * endpoint's ops table with the DTO's context. On MSG endpoints, whose CQ reports only what asks for
 * it ({@link #selective}), every request names its completion flags itself ({@code fi_sendmsg},
 * {@code fi_writemsg}, {@code fi_readmsg}): a signalled one {@code FI_COMPLETION} and, where the
 * provider has it, {@code FI_DELIVERY_COMPLETE}; an unsignalled one (DAT_COMPLETION_SUPPRESS_FLAG,
 * {@link EpData}) neither, so that its success costs the provider no completion and tcp no
 * acknowledgement. On RDM endpoints the endpoint's defaults ({@code fi_sendv}, {@code fi_senddata})
 * complete every send once the provider has it (a send leaves on a receive credit,
 * {@link MsgCredits}); RDMA Writes and Reads ask {@code FI_DELIVERY_COMPLETE} themselves. On shm
 * every receive ends with an overflow buffer.
 * Callers hold the EP's (or the SRQ's) lock.
 *
 * <p>Behaviours: OBJ_07, LMR_04, EXT_05, EXT_06.
 */
final class EpPosts {
    private final OfiIa ia;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment iov;
    private final MemorySegment desc;
    private final MemorySegment rmaIov;
    private final MemorySegment msgRma;
    /** The {@code fi_msg} of a send on a MSG endpoint. */
    private final MemorySegment msg;
    /**
     * MSG endpoints: the transmit CQ is bound with {@code FI_SELECTIVE_COMPLETION} and a request
     * completes only if posted with {@code FI_COMPLETION} (its errors are reported either way).
     */
    final boolean selective;
    /** The flags of a signalled request that must complete once placed at the peer. */
    private final long placed;
    /** The functions of the endpoint posted to last ({@link #fns}). */
    private FiCalls.EpFunctions fns;
    /** The provider writes with immediate data itself (verbs: {@code IBV_WR_RDMA_WRITE_WITH_IMM}). */
    private final boolean writeData;
    /**
     * shm only: a buffer every receive ends with, beyond the consumer's segments. With delivery-complete
     * shm moves a message of up to 4 KiB by its segmented protocol (SAR), which never finishes a message
     * longer than the receive (neither side completed); with this room it does, and a completion longer
     * than the consumer's segments is LOCAL_LENGTH (OBJ_07). Null elsewhere.
     */
    private final MemorySegment overflow;

    EpPosts(OfiIa ia) {
        this.ia = ia;
        writeData = OfiExtensions.nativeWriteData(ia);
        iov = arena.allocate(16L * OfiIa.MAX_IOV, 8);
        desc = arena.allocate(8L * OfiIa.MAX_IOV, 8);
        rmaIov = arena.allocate(FI_RMA_IOV.size(), 8);
        msgRma = arena.allocate(FI_MSG_RMA.size(), 8);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_MSG_IOV, iov.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_DESC, desc.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV, rmaIov.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV_COUNT, 1);
        msg = arena.allocate(FI_MSG.size(), 8);
        msg.set(ValueLayout.JAVA_LONG, MSG_MSG_IOV, iov.address());
        msg.set(ValueLayout.JAVA_LONG, MSG_DESC, desc.address());
        selective = ia.rdm == null;
        placed = Fi.FI_COMPLETION | FiInfo.deliveryCompleteFlag(ia.info);
        overflow = ia.rdm != null && ia.rdm.named && (ia.mrMode & Fi.FI_MR_LOCAL) == 0
                ? arena.allocate(RdmIa.OVERFLOW, 64) : null;
    }

    void close() {
        arena.close();
    }

    /** Checks the segments of a DTO against the IA and {@code pz} and fills the arrays; the total length. */
    long fill(OfiPz pz, List<LmrTriplet> segments, int maxIov, MemPriv needed) {
        return fill(ia, pz, iov, desc, segments, maxIov, needed);
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

    /**
     * Hands a request whose {@code n} segments are filled in to libfabric; {@code extended} is
     * RDMA_WRITE_IMMED for an RDMA Write with immediate data (always signalled), else null;
     * {@code signal} false for an unsignalled send or RDMA Write on a {@link #selective} endpoint. The
     * call's return code. On an RDM endpoint a send leaves on a receive credit ({@code counted}) and
     * completes once the provider has it; to a peer that does not count its receives (an EP on an
     * SRQ) it asks delivery-complete, so that it stays outstanding until a receive takes it.
     */
    long post(long fid, DtoOperation op, ExtensionType extended, int n, long total, RmrTriplet remote,
              int immediateData, long ctx, boolean signal, boolean counted) {
        if (extended == ExtensionType.RDMA_WRITE_IMMED) {
            return writeImmediate(fid, n, total, remote, immediateData, ctx);
        }
        if (!selective) {
            return switch (op) {
                case SEND -> counted ? FiCalls.sendv(fid, iov.address(), desc.address(), n, ctx)
                        : send(fid, n, ctx, Fi.FI_COMPLETION | Fi.FI_DELIVERY_COMPLETE, 0);
                case RDMA_WRITE -> write(fid, n, total, remote, ctx);
                case RDMA_READ -> read(fid, n, total, remote, ctx, Fi.FI_COMPLETION | Fi.FI_DELIVERY_COMPLETE);
                default -> throw new IllegalArgumentException(op.toString());
            };
        }
        return switch (op) {
            case SEND -> send(fid, n, ctx, signal ? placed : 0, 0);
            case RDMA_WRITE -> write(fid, n, total, remote, ctx, signal ? placed : 0);
            case RDMA_READ -> read(fid, n, total, remote, ctx, Fi.FI_COMPLETION);
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    /** The flags of a signalled request that must complete once placed at the peer. */
    long placed() {
        return placed;
    }

    /** The data-path functions of the endpoint {@code fid}, resolved when it is new to this EP. */
    private FiCalls.EpFunctions fns(long fid) {
        return fns = FiCalls.EpFunctions.of(fns, fid);
    }

    /** A send through {@code fi_sendmsg} with {@code flags} (and {@code data} with FI_REMOTE_CQ_DATA). */
    private long send(long fid, int n, long ctx, long flags, long data) {
        msg.set(ValueLayout.JAVA_LONG, MSG_IOV_COUNT, n);
        msg.set(ValueLayout.JAVA_LONG, MSG_CONTEXT, ctx);
        msg.set(ValueLayout.JAVA_LONG, MSG_DATA, data);
        return fns(fid).sendmsg(msg.address(), flags);
    }

    /**
     * An RDMA Read through {@code fi_readmsg}, signalled. On RDM endpoints with {@code FI_DELIVERY_COMPLETE}
     * too, as their RDMA Writes: shm 1.17 moves an RMA without it by its "fast" path, a cross-memory
     * copy of the target's virtual addresses that no key, bound or right is checked against
     * ({@code smr_rma_fast}, {@code prov/shm/src/smr_rma.c}); with it the target checks the request
     * ({@code smr_progress_cmd_rma}) and a refused one is reported (LMR_05, LMR_06).
     */
    private long read(long fid, int n, long total, RmrTriplet remote, long ctx, long flags) {
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, remote.targetAddress());
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_LEN, total);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_KEY, remote.rmrContext() & 0xffffffffL);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_IOV_COUNT, n);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, ctx);
        return fns(fid).readmsg(msgRma.address(), flags);
    }

    /** Posts a receive of the {@code n} segments filled in (and the overflow buffer on shm); the return code. */
    long recv(long fid, int n, long ctx) {
        return selective ? fns(fid).recvv(iov.address(), desc.address(), n, ctx)
                : FiCalls.recvv(fid, iov.address(), desc.address(), withOverflow(n), ctx);
    }

    /** Appends the overflow buffer to the {@code n} receive segments filled in, if there is room: the count. */
    private int withOverflow(int n) {
        if (overflow == null || n >= OfiIa.MAX_IOV) {
            return n;
        }
        iov.set(ValueLayout.JAVA_LONG, 16L * n, overflow.address());
        iov.set(ValueLayout.JAVA_LONG, 16L * n + 8, overflow.byteSize());
        desc.set(ValueLayout.JAVA_LONG, 8L * n, 0L);
        return n + 1;
    }

    /**
     * An RDMA Write with immediate data ({@link OfiExtensions}): the write, whose completion carries
     * {@link OfiExtensions#WRITE_HALF} and is dropped on success, then a message of no bytes whose
     * remote CQ data is the write's length (high half) and the immediate data (low half); the
     * message's completion completes the DTO. If the write went and the message did not, the write is
     * posted again with the message on the next try (the same bytes to the same place). Behaviours:
     * EXT_05, EXT_06.
     */
    private long writeImmediate(long fid, int n, long total, RmrTriplet remote, int immediateData, long ctx) {
        if (writeData) {
            // verbs: one RDMA Write with immediate data; the sink's receive completion has its length.
            msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_DATA, immediateData & 0xffff_ffffL);
            return write(fid, n, total, remote, ctx, Fi.FI_COMPLETION | Fi.FI_REMOTE_CQ_DATA);
        }
        long rc = write(fid, n, total, remote, ctx | OfiExtensions.WRITE_HALF);
        if (rc < 0) {
            return rc;
        }
        long data = (total << 32) | (immediateData & 0xffff_ffffL);
        return selective ? send(fid, 0, ctx, placed | Fi.FI_REMOTE_CQ_DATA, data)
                : FiCalls.senddata(fid, 0, 0, 0, data, ctx);
    }

    /**
     * An RDMA Write through {@code fi_writemsg} with {@code FI_DELIVERY_COMPLETE}: it completes only
     * once the target has placed it (and fails if the target refuses it: a freed key, bounds,
     * rights), as a DAT RDMA Write completion means.
     */
    private long write(long fid, int n, long total, RmrTriplet remote, long ctx) {
        return write(fid, n, total, remote, ctx, Fi.FI_COMPLETION | Fi.FI_DELIVERY_COMPLETE);
    }

    private long write(long fid, int n, long total, RmrTriplet remote, long ctx, long flags) {
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, remote.targetAddress());
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_LEN, total);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_KEY, remote.rmrContext() & 0xffffffffL);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_IOV_COUNT, n);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, ctx);
        return selective ? fns(fid).writemsg(msgRma.address(), flags) : FiCalls.writemsg(fid, msgRma.address(), flags);
    }
}
