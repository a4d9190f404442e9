package org.jdapl.provider.ofa;

import org.jdapl.dat.ExtensionType;
import org.jdapl.provider.ofa.verbs.Structs.IbvWc;
import org.jdapl.provider.ofa.verbs.Verbs;

/**
 * The fields of one {@code struct ibv_wc} that {@code ibv_poll_cq} wrote, read by address where
 * they are needed: a completion passes its address along instead of six values, and the usual
 * successful completion never reads its flags or invalidated key unless it is reported.
 */
final class WorkCompletion {
    static final long BYTES = IbvWc.S.size();
    private static final long WR_ID = IbvWc.WR_ID.offset();
    private static final long STATUS = IbvWc.STATUS.offset();
    private static final long OPCODE = IbvWc.OPCODE.offset();
    private static final long BYTE_LEN = IbvWc.BYTE_LEN.offset();
    private static final long QP_NUM = IbvWc.QP_NUM.offset();
    private static final long WC_FLAGS = IbvWc.WC_FLAGS.offset();
    private static final long INVALIDATED_RKEY = IbvWc.INVALIDATED_RKEY.offset();

    private WorkCompletion() {
    }

    static long wrId(long wc) {
        return DataPathMemory.getLong(wc + WR_ID);
    }

    /** {@code enum ibv_wc_status}: 0 for success. */
    static int status(long wc) {
        return DataPathMemory.getInt(wc + STATUS);
    }

    /** The bytes a receive took in. */
    static long byteLen(long wc) {
        return Integer.toUnsignedLong(DataPathMemory.getInt(wc + BYTE_LEN));
    }

    /** The sending queue pair of a UD receive. */
    static int srcQp(long wc) {
        return DataPathMemory.getInt(wc + IbvWc.SRC_QP.offset()) & 0xff_ffff;
    }

    static int qpNum(long wc) {
        return DataPathMemory.getInt(wc + QP_NUM);
    }

    /** Whether the completion carries immediate data (IBV_WC_WITH_IMM). */
    static boolean withImmediate(long wc) {
        return (DataPathMemory.getInt(wc + WC_FLAGS) & Verbs.WC_WITH_IMM) != 0;
    }

    /** The immediate data, as the sender posted it (the 32 bits are carried as they are). */
    static int immediateData(long wc) {
        return DataPathMemory.getInt(wc + INVALIDATED_RKEY);
    }

    /**
     * The extension kind of a successful receive with immediate data: RDMA_WRITE_IMMED_DATA where an
     * RDMA Write with immediate data consumed it, else RECV_IMMED_DATA.
     */
    static ExtensionType immediateKind(long wc) {
        return DataPathMemory.getInt(wc + OPCODE) == Verbs.WC_RECV_RDMA_WITH_IMM
                ? ExtensionType.RDMA_WRITE_IMMED_DATA : ExtensionType.RECV_IMMED_DATA;
    }

    /** The key a send with invalidate invalidated, or 0 if the completion carries none. */
    static int invalidatedRkey(long wc) {
        return (DataPathMemory.getInt(wc + WC_FLAGS) & Verbs.WC_WITH_INV) != 0
                ? DataPathMemory.getInt(wc + INVALIDATED_RKEY) : 0;
    }
}
