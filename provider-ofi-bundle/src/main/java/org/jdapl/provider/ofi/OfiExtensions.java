package org.jdapl.provider.ofi;

import java.util.Map;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.ProviderAttributes;

/**
 * OFED's extensions on a libfabric MSG endpoint, what libfabric's tcp provider offers of them: RDMA
 * Write with immediate data (DAT_IB_IMMED_DATA) and counters (DAT_COUNTERS, {@link OfiCounters}).
 * Atomics are not offered: {@code fi_getinfo} reports no FI_ATOMIC for tcp's FI_EP_MSG
 * ({@code fi_info -p tcp -t FI_EP_MSG -c FI_ATOMIC}: FI_ENODATA), only for tcp;ofi_rxm's RDM
 * emulation, so fetch-and-add and compare-and-swap fail MODEL_NOT_SUPPORTED and the IA says so; nor
 * are datagram endpoints (tcp has no FI_EP_DGRAM). libfabric's verbs provider has atomics on its MSG
 * endpoints, but they are not offered either: libfabric's memory access flags have no remote-atomic
 * right, and verbs registers every region with {@code FI_REMOTE_WRITE} as
 * {@code IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC} (1.17, {@code verbs_mr.c},
 * {@code vrb_mr_ofi2ibv_access}), so a region granting remote write but not
 * {@code DAT_IB_MEM_PRIV_REMOTE_ATOMIC} cannot refuse an atomic (EXT_01); and up to 2.1 its
 * fetch-and-add and compare-and-swap take the operands from the pointer values of {@code buf} and
 * {@code compare}, not from the memory they point to ({@code wr.wr.atomic.compare_add = (uintptr_t)buf},
 * fixed in 2.2.0 by "prov/verbs: fix atomic work request fields"). An RDM IA offers the counters only (they are
 * counted above libfabric, on the data path both kinds of endpoint share).
 *
 * <p>An RDMA Write with immediate data is two operations on the endpoint: {@code fi_writemsg} of the
 * data with FI_DELIVERY_COMPLETE, then a message of no bytes with the immediate data as remote CQ data
 * ({@code fi_senddata}, FI_REMOTE_CQ_DATA). The tcp provider hands a write's own remote CQ data to the
 * target's CQ without a posted receive ({@code tcpx_process_remote_write}), where DAT wants it to
 * consume one; a message does consume the sink's next receive, in order with the sends (FI_ORDER_SAS),
 * and after the write's data is placed (FI_ORDER_SAW). The 64 bits of CQ data carry the immediate data
 * (low half) and the write's length (high half), which the sink's completion reports; the length is
 * below 2^32 ({@link #maxWriteImmediate}, LENGTH_ERROR beyond). The request
 * completes once, as RDMA_WRITE_IMMED: with the message's completion, or with the write's error; the
 * write's completion carries the DTO's context with {@link #WRITE_HALF} set and is otherwise dropped.
 *
 * <p>On libfabric's verbs provider ({@link #nativeWriteData}) the CQ data is 32 bits
 * ({@code cq_data_size} 4), too small for the length, and the provider has the operation itself:
 * one {@code fi_writemsg} with FI_REMOTE_CQ_DATA ({@code IBV_WR_RDMA_WRITE_WITH_IMM}), which
 * consumes the sink's next receive in order with the sends and completes it with the write's length
 * and the immediate data ({@link CqReader}); the request completes with it.
 *
 * <p>Since the message consumes a receive at the peer, the request is a request of the EP's data path
 * like a send ({@link EpData#postRequest}): on a connection with receive credits ({@link MsgCredits})
 * it takes one, and without one it waits in the request queue, in order with the sends and with every
 * request after it waiting behind it ({@link EpData#pump}); an abrupt disconnect flushes it, once, as
 * RDMA_WRITE_IMMED ({@link EpData#flush}). The posting itself is {@code EpData}'s (its iovec arrays).
 *
 * <p>Behaviours: EXT_05, EXT_06, EXT_07, EXT_09.
 */
final class OfiExtensions {
    /** The bit of a libfabric context that marks the write half of an RDMA Write with immediate data. */
    static final long WRITE_HALF = DtoQueue.SPARE_BIT;

    private OfiExtensions() {
    }

    /** Whether the IA offers RDMA Write with immediate data: a MSG IA (not an RDM one). Counters every IA offers. */
    static boolean offered(OfiIa ia) {
        return ia.rdm == null;
    }

    /** Whether the IA's provider writes with immediate data itself: libfabric's verbs. */
    static boolean nativeWriteData(OfiIa ia) {
        return "verbs".equals(org.jdapl.provider.ofi.fabric.FiInfo.providerName(ia.info));
    }

    /**
     * The longest RDMA Write with immediate data: 2^32 - 1 bytes (on verbs the work completion's
     * length, elsewhere the high half of its message's CQ data).
     */
    static long maxWriteImmediate(OfiIa ia) {
        return 0xffff_ffffL;
    }

    /** The extensions' entries of the provider attributes. */
    static Map<String, String> attributes(OfiIa ia) {
        String on = offered(ia) ? "TRUE" : "FALSE";
        return Map.of(ProviderAttributes.DAT_COUNTERS, "TRUE",
                ProviderAttributes.DAT_IB_IMMED_DATA, on,
                ProviderAttributes.DAT_IB_FETCH_AND_ADD, "FALSE",
                ProviderAttributes.DAT_IB_CMP_AND_SWAP, "FALSE",
                ProviderAttributes.DAT_IB_UD, "FALSE");
    }

    /** Fails MODEL_NOT_SUPPORTED on an IA that does not offer the extensions. Behaviours: EXT_04. */
    static void requireOffered(OfiIa ia, String operation) {
        if (!offered(ia)) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, operation
                    + ": not offered by the libfabric provider's RDM endpoints");
        }
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
}
