package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.provider.ofa.verbs.Structs.IbvQp;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpCap;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpInitAttr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * The {@code IBV_QPT_UD} queue pair of a datagram endpoint and every change of its state: created
 * with rdma_cm's UD qkey ({@code RDMA_UDP_QKEY}) and taken from RESET through INIT (port, pkey 0,
 * qkey) and RTR to RTS at once, as a datagram needs no peer; to the error state at
 * {@code dat_ep_disconnect} (its receives flush); destroyed at {@code dat_ep_free}. Each receive has
 * one scatter entry more than the consumer's, for the GRH slot.
 */
final class UdQueuePair {
    /** rdma_cm's qkey of RDMA_PS_UDP ({@code RDMA_UDP_QKEY}). */
    static final int QKEY = 0x01234567;

    private final MemorySegment qp;
    private final int num;

    /** {@code ibv_create_qp} on the two CQs and the moves to RTS; RESOURCE_TEP if they fail. */
    UdQueuePair(OfaDevice device, MemorySegment pd, MemorySegment sendCq, MemorySegment recvCq, EpAttributes a) {
        try {
            qp = create(device, pd, sendCq, recvCq, a);
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_TEP, "dat_ep_create (UD: ibv_create_qp)", e);
        }
        num = IbvQp.QP_NUM.getInt(qp);
    }

    private static MemorySegment create(OfaDevice device, MemorySegment pd, MemorySegment sendCq,
                                        MemorySegment recvCq, EpAttributes a) {
        Verbs v = Verbs.get();
        MemorySegment q;
        try (Arena t = Arena.ofConfined()) {
            MemorySegment init = t.allocate(IbvQpInitAttr.S.size(), 8);
            IbvQpInitAttr.SEND_CQ.setPointer(init, sendCq);
            IbvQpInitAttr.RECV_CQ.setPointer(init, recvCq);
            MemorySegment cap = IbvQpInitAttr.CAP.slice(init, IbvQpCap.S.size());
            IbvQpCap.MAX_SEND_WR.setInt(cap, a.maxRequestDtos());
            IbvQpCap.MAX_RECV_WR.setInt(cap, Math.max(1, a.maxRecvDtos()));
            IbvQpCap.MAX_SEND_SGE.setInt(cap, a.maxRequestIov());
            IbvQpCap.MAX_RECV_SGE.setInt(cap, a.maxRecvIov() + 1);
            IbvQpInitAttr.QP_TYPE.setInt(init, Verbs.QPT_UD);
            q = v.createQp(pd, init).reinterpret(IbvQp.S.size());
            MemorySegment attr = t.allocate(IbvQpAttr.S.size(), 8);
            try {
                IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_INIT);
                IbvQpAttr.PKEY_INDEX.setU16(attr, 0);
                IbvQpAttr.PORT_NUM.setU8(attr, device.port);
                IbvQpAttr.QKEY.setInt(attr, QKEY);
                v.modifyQp(q, attr, Verbs.QP_STATE | Verbs.QP_PKEY_INDEX | Verbs.QP_PORT | Verbs.QP_QKEY);
                attr.fill((byte) 0);
                IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_RTR);
                v.modifyQp(q, attr, Verbs.QP_STATE);
                attr.fill((byte) 0);
                IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_RTS);
                IbvQpAttr.SQ_PSN.setInt(attr, 0);
                v.modifyQp(q, attr, Verbs.QP_STATE | Verbs.QP_SQ_PSN);
            } catch (VerbsException e) {
                MemorySegment created = q;
                NativeErrors.quietly("ibv_destroy_qp", () -> v.destroyQp(created));
                throw e;
            }
        }
        return q;
    }

    /** The queue pair's address, as the post downcalls take it. */
    long address() {
        return qp.address();
    }

    /** The queue pair number, which the router matches with each completion's. */
    int num() {
        return num;
    }

    /** To the error state: outstanding receives complete FLUSHED, datagrams sent to it are dropped. */
    void toError() {
        try (Arena t = Arena.ofConfined()) {
            MemorySegment attr = t.allocate(IbvQpAttr.S.size(), 8);
            IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_ERR);
            Verbs.get().modifyQp(qp, attr, Verbs.QP_STATE);
        } catch (VerbsException e) {
            throw new DatException(DatReturnType.INTERNAL_ERROR, DatReturnSubtype.NO_SUBTYPE,
                    "dat_ep_disconnect (ibv_modify_qp to ERR)", e);
        }
    }

    void destroy() {
        NativeErrors.quietly("ibv_destroy_qp", () -> Verbs.get().destroyQp(qp));
    }
}
