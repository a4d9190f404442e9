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
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;

/**
 * OFED's extensions on a libfabric MSG endpoint, what libfabric's tcp provider offers of them: RDMA
 * Write with immediate data (DAT_IB_IMMED_DATA) and counters (DAT_COUNTERS, {@link OfiCounters}).
 * Atomics are not offered: {@code fi_getinfo} reports no FI_ATOMIC for tcp's FI_EP_MSG
 * ({@code fi_info -p tcp -t FI_EP_MSG -c FI_ATOMIC}: FI_ENODATA), only for tcp;ofi_rxm's RDM
 * emulation, so fetch-and-add and compare-and-swap fail MODEL_NOT_SUPPORTED and the IA says so; nor
 * are datagram endpoints (tcp has no FI_EP_DGRAM). An RDM IA offers none of them.
 *
 * <p>An RDMA Write with immediate data is two operations on the endpoint: {@code fi_writemsg} of the
 * data with FI_DELIVERY_COMPLETE, then a message of no bytes with the immediate data as remote CQ data
 * ({@code fi_senddata}, FI_REMOTE_CQ_DATA). The tcp provider hands a write's own remote CQ data to the
 * target's CQ without a posted receive ({@code tcpx_process_remote_write}), where DAT wants it to
 * consume one; a message does consume the sink's next receive, in order with the sends (FI_ORDER_SAS),
 * and after the write's data is placed (FI_ORDER_SAW). The 64 bits of CQ data carry the immediate data
 * (low half) and the write's length (high half), which the sink's completion reports. The request
 * completes once, as RDMA_WRITE_IMMED: with the message's completion, or with the write's error; the
 * write's completion carries the DTO's context with {@link #WRITE_HALF} set and is otherwise dropped.
 *
 * <p>Behaviours: EXT_05, EXT_06, EXT_07, EXT_09.
 */
final class OfiExtensions {
    /** The bit of a libfabric context that marks the write half of an RDMA Write with immediate data. */
    static final long WRITE_HALF = 1L << 38;

    private final OfiEp ep;
    private Arena arena;
    private MemorySegment iov;
    private MemorySegment desc;
    private MemorySegment rmaIov;
    private MemorySegment msgRma;

    OfiExtensions(OfiEp ep) {
        this.ep = ep;
    }

    /** Whether the IA offers RDMA Write with immediate data and counters: a MSG IA (not an RDM one). */
    static boolean offered(OfiIa ia) {
        return ia.rdm == null;
    }

    /** The extensions' entries of the provider attributes. */
    static java.util.Map<String, String> attributes(OfiIa ia) {
        String on = offered(ia) ? "TRUE" : "FALSE";
        return java.util.Map.of(org.jdapl.dat.ProviderAttributes.DAT_COUNTERS, on,
                org.jdapl.dat.ProviderAttributes.DAT_IB_IMMED_DATA, on,
                org.jdapl.dat.ProviderAttributes.DAT_IB_FETCH_AND_ADD, "FALSE",
                org.jdapl.dat.ProviderAttributes.DAT_IB_CMP_AND_SWAP, "FALSE",
                org.jdapl.dat.ProviderAttributes.DAT_IB_UD, "FALSE");
    }

    static void requireOffered(OfiIa ia, String operation) {
        if (!offered(ia)) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, operation
                    + ": not offered by the libfabric provider's RDM endpoints");
        }
    }

    /**
     * {@code dat_ib_post_rdma_write_immed} on the connected endpoint {@code fid} (the EP's lock held).
     * Behaviours: EXT_05, EXT_06.
     */
    void postWriteImmediate(long fid, List<LmrTriplet> segments, long cookie, RmrTriplet remote, int immediateData,
                            Set<CompletionFlag> flags, int maxIov) {
        requireOffered(ep.ia, "dat_ib_post_rdma_write_immed");
        if (remote == null) {
            throw DatException.invalidParameter(4, "no remote segment");
        }
        if (arena == null) {
            arena = Arena.ofShared();
            iov = arena.allocate(16L * OfiIa.MAX_IOV, 8);
            desc = arena.allocate(8L * OfiIa.MAX_IOV, 8);
            rmaIov = arena.allocate(FI_RMA_IOV.size(), 8);
            msgRma = arena.allocate(FI_MSG_RMA.size(), 8);
        }
        long total = EpData.fill(ep.ia, ep.pz(), iov, desc, segments, maxIov, MemPriv.LOCAL_READ);
        if (total > 0xffff_ffffL || total > ep.ia.maxMsgSize) {
            throw new DatException(DatReturnType.LENGTH_ERROR, total + " bytes exceed the maximum message size");
        }
        if (remote.length() < total) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "the remote segment is shorter than the local ones");
        }
        OfiEvd evd = ep.requestEvd();
        if (evd == null) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EP_EVD_REQUEST, "the EP has no request EVD");
        }
        DtoQueue q = ep.data.request;
        if (q.full(Math.max(ep.attributes().maxRequestDtos(), 1))) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                    "the request queue is full");
        }
        if (!evd.reserve()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEVD,
                    "the request EVD could overflow");
        }
        boolean suppress = flags != null
                && (flags.contains(CompletionFlag.SUPPRESS) || flags.contains(CompletionFlag.UNSIGNALLED));
        long seq = q.add(cookie, DtoOperation.RDMA_WRITE, total, suppress, null);
        q.extended[q.slot(seq)] = ExtensionType.RDMA_WRITE_IMMED;
        long ctx = q.context(seq);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, remote.targetAddress());
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_LEN, total);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_KEY, remote.rmrContext() & 0xffffffffL);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_MSG_IOV, iov.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_DESC, desc.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_IOV_COUNT, segments.size());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV, rmaIov.address());
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV_COUNT, 1);
        msgRma.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, ctx | WRITE_HALF);
        long rc = FiCalls.writemsg(fid, msgRma.address(), Fi.FI_COMPLETION | Fi.FI_DELIVERY_COMPLETE);
        if (rc >= 0) {
            rc = FiCalls.senddata(fid, 0, 0, 0, (total << 32) | (immediateData & 0xffff_ffffL), ctx);
        }
        if (rc < 0) {
            // A write posted before a failed message completes against a slot that is gone: dropped.
            q.undo(seq);
            evd.unreserve();
            if (rc == -Fi.FI_EAGAIN) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the provider's queue is full");
            }
            throw FiErrors.toDat(rc, "dat_ib_post_rdma_write_immed");
        }
        ep.counts.inc(EpCounter.POST_WRITE_IMM, total);
    }

    /** Whether {@code context} is the write half of an RDMA Write with immediate data. */
    static boolean isWriteHalf(long context) {
        return DtoQueue.isRequest(context) && (context & WRITE_HALF) != 0;
    }

    /** The context of the DTO whose write half is {@code context}. */
    static long dtoOf(long context) {
        return context & ~WRITE_HALF;
    }

    /** Queues the extended completion of a DTO of type {@code type} on {@code evd}, which had room for it. */
    static void emit(OfiEvd evd, OfiEp ep, long cookie, DtoStatus status, long length, ExtensionType type,
                     int immediateData) {
        evd.enqueueReserved(new DatEvent.ExtendedDtoCompletion(evd, ep, cookie, status, length, type, immediateData,
                null));
    }

    /** Releases the native memory (the EP is freed). */
    void close() {
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }
}
