package org.jdapl.provider.emu.tcp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.MemPriv;
import org.jdapl.provider.emu.Contexts;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.Segments;
import org.jdapl.provider.emu.WorkRequest;

/**
 * OFED's extended DTOs on a tcp connection (PROTOCOL.md, "Extensions"), the parts of them that are no
 * part of the engine's bookkeeping: the frame an extended request goes out as, and the responder's
 * execution of an atomic. {@link TcpRcEngine} transmits them in order with the EP's other requests:
 * an atomic as an RDMA Read is (pipelined, answered by ATOMIC_RESP), an RDMA Write with immediate
 * data as a send is (a barrier, refused RNR while the responder has no receive, sent again).
 *
 * <p>An atomic is executed by the responder under its IA's domain lock, which every connection of
 * the IA and every local poster holds while it touches the connection's memory, so it is atomic with
 * respect to every other atomic on the same target, whichever connection carried it, as on a NIC.
 *
 * <p>Behaviours: EXT_01, EXT_02, EXT_03, EXT_05, EXT_06.
 */
final class TcpExtensions {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;

    private TcpExtensions() {
    }

    /** Whether {@code x} is an atomic (answered by ATOMIC_RESP) rather than an RDMA Write with immediate data. */
    static boolean isAtomic(WorkRequest.Ext x) {
        return x.type != ExtensionType.RDMA_WRITE_IMMED;
    }

    /** The frame {@code x} goes out as, numbered {@code x.seq}. */
    static Frame frame(TcpOutput out, WorkRequest.Ext x) {
        int ctx = x.remote.rmrContext();
        long address = x.remote.targetAddress();
        return switch (x.type) {
            case FETCH_AND_ADD -> out.frame().fetchAdd(x.seq, ctx, address, x.operand);
            case CMP_AND_SWAP -> out.frame().cmpSwap(x.seq, ctx, address, x.operand,
                    ByteBuffer.allocate(8).putLong(0, x.swap).array());
            case RDMA_WRITE_IMMED -> out.frame().rdmaWriteImmediate(x.seq, ctx, address, x.immediateData, x.length,
                    x.iov);
            default -> throw new IllegalStateException("extended DTO " + x.type + " on an RC connection");
        };
    }

    /** The swap value a CMP_SWAP frame's payload carries. */
    static long swapValue(byte[] payload) {
        return ByteBuffer.wrap(payload).getLong();
    }

    /**
     * Executes the atomic {@code h} against the responder's memory (domain lock held): the 64 bits at
     * the frame's target address, of an rmr_context {@code contexts} holds for {@code responder} granting REMOTE_ATOMIC, 8-byte
     * aligned. Behaviours: EXT_01, EXT_02, EXT_03.
     *
     * @param swap the swap value of a CMP_SWAP
     * @return the target's value before the atomic in {@code result[0]}; false if the access is refused
     */
    static boolean execute(Contexts contexts, EmuEp responder, Frame h, long swap, long[] result) {
        long ctx = h.rmrContext();
        long address = h.targetAddress();
        if ((ctx >>> 32) != 0 || (address & 7) != 0) {
            return false;
        }
        MemorySegment target = contexts.resolve((int) ctx, responder, address, 8,
                MemPriv.REMOTE_ATOMIC);
        if (target == null) {
            return false;
        }
        long old = target.get(U64, 0);
        if (h.type() == FrameType.FETCH_ADD) {
            target.set(U64, 0, old + h.addValue());
        } else if (old == h.compareValue()) {
            target.set(U64, 0, swap);
        }
        result[0] = old;
        return true;
    }

    /**
     * The fetched value lands in the requester's 8 local bytes.
     *
     * @return false if that memory is no longer registered (the atomic completes LOCAL_PROTECTION)
     */
    static boolean land(WorkRequest.Ext x, long original) {
        if (!Segments.usable(x.iov)) {
            return false;
        }
        Segments.slices(x.iov).getFirst().set(U64, 0, original);
        return true;
    }
}
