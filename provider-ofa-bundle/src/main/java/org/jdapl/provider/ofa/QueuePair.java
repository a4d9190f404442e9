package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.EpAttributes;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Structs.IbvQp;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpCap;
import org.jdapl.provider.ofa.verbs.Structs.IbvQpInitAttr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An EP's RC queue pair of our own ({@code ibv_create_qp} on the EP's CQs and SRQ) and every change
 * of its state: RESET to INIT at creation (so that receives can be posted before a connection),
 * RTR and RTS with the attributes rdma_cm computes for the connection's ID
 * ({@code rdma_init_qp_attr}), ERR when the connection ends (flushing what is outstanding:
 * DISC_02), and destruction. A queue pair is never reused: {@code dat_ep_reset} makes a new one
 * (DISC_18). Calls are made under the EP's lock.
 *
 * <p>Behaviours: DISC_02, DISC_18.
 */
final class QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(QueuePair.class);

    private final OfaEp ep;
    private final MemorySegment qp;
    private final int num;
    /** The queue pair's inline data limit (0: none). */
    private final int inlineLimit;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment attr = arena.allocate(IbvQpAttr.S.size(), 8);
    private final MemorySegment mask = arena.allocate(4, 4);

    private QueuePair(OfaEp ep, MemorySegment qp, int inlineLimit) {
        this.ep = ep;
        this.qp = qp;
        this.num = IbvQp.QP_NUM.getInt(qp);
        this.inlineLimit = inlineLimit;
    }

    /**
     * A queue pair for the EP on what it is made on ({@code b}: its PZ, CQs, SRQ and attributes), in INIT and
     * known to the IA's router; INSUFFICIENT_RESOURCES/RESOURCE_TEP if the device refuses it.
     */
    static QueuePair create(OfaEp ep, EpBinding b, String what) {
        OfaIa ia = ep.ia;
        EpAttributes attrs = b.attributes();
        MemorySegment qp;
        int inline;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment init = a.allocate(IbvQpInitAttr.S.size(), 8);
            OfaEvd request = b.requestEvd();
            OfaEvd recv = b.recvEvd();
            IbvQpInitAttr.SEND_CQ.setPointer(init, request != null ? request.cqSegment() : ia.nullCq());
            IbvQpInitAttr.RECV_CQ.setPointer(init, recv != null ? recv.cqSegment() : ia.nullCq());
            if (b.srq() != null) {
                IbvQpInitAttr.SRQ.setPointer(init, b.srq().srq);
            }
            MemorySegment cap = IbvQpInitAttr.CAP.slice(init, IbvQpCap.S.size());
            IbvQpCap.MAX_SEND_WR.setInt(cap, attrs.maxRequestDtos());
            IbvQpCap.MAX_RECV_WR.setInt(cap, b.srq() != null ? 0 : Math.max(1, attrs.maxRecvDtos()));
            IbvQpCap.MAX_SEND_SGE.setInt(cap, attrs.maxRequestIov());
            IbvQpCap.MAX_RECV_SGE.setInt(cap, b.srq() != null ? 0 : attrs.maxRecvIov());
            IbvQpInitAttr.QP_TYPE.setInt(init, Verbs.QPT_RC);
            IbvQpCap.MAX_INLINE_DATA.setInt(cap, SendQueue.INLINE_MAX);
            try {
                qp = Verbs.get().createQp(b.pz().pd, init);
            } catch (VerbsException e) {
                // A device without inline data: the same queue pair without it.
                IbvQpCap.MAX_INLINE_DATA.setInt(cap, 0);
                qp = Verbs.get().createQp(b.pz().pd, init);
            }
            // ibv_create_qp writes the capabilities the queue pair got into cap.
            inline = Math.min(SendQueue.INLINE_MAX, Math.max(0, IbvQpCap.MAX_INLINE_DATA.getInt(cap)));
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_TEP, what + " (ibv_create_qp)", e);
        }
        QueuePair q = new QueuePair(ep, qp.reinterpret(IbvQp.S.size()), inline);
        try {
            q.toInit();
        } catch (VerbsException e) {
            q.destroy();
            throw NativeErrors.resources(DatReturnSubtype.RESOURCE_TEP, what + " (ibv_modify_qp to INIT)", e);
        }
        ia.router().addQp(ep, q.qp, q.num);
        return q;
    }

    MemorySegment qp() {
        return qp;
    }

    long address() {
        return qp.address();
    }

    int num() {
        return num;
    }

    int inlineLimit() {
        return inlineLimit;
    }

    private void toInit() {
        attr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_INIT);
        IbvQpAttr.PKEY_INDEX.setU16(attr, 0);
        IbvQpAttr.PORT_NUM.setU8(attr, ep.ia.device().port);
        IbvQpAttr.QP_ACCESS_FLAGS.setInt(attr,
                Verbs.ACCESS_LOCAL_WRITE | Verbs.ACCESS_REMOTE_WRITE | Verbs.ACCESS_REMOTE_READ
                        | (ep.ia.device().atomicCap != 0 ? Verbs.ACCESS_REMOTE_ATOMIC : 0));
        Verbs.get().modifyQp(qp, attr, Verbs.QP_STATE | Verbs.QP_PKEY_INDEX | Verbs.QP_PORT | Verbs.QP_ACCESS_FLAGS);
    }

    /** RTR then RTS with the attributes rdma_cm computes for the ID (negative: keep rdma_cm's read depths). */
    void toRtrRts(MemorySegment id, int responderResources, int initiatorDepth) {
        RdmaCm cm = RdmaCm.get();
        Verbs v = Verbs.get();
        attr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_RTR);
        int bits = cm.initQpAttr(id, attr, mask);
        if (responderResources >= 0) {
            IbvQpAttr.MAX_DEST_RD_ATOMIC.setU8(attr, responderResources);
            bits |= Verbs.QP_MAX_DEST_RD_ATOMIC;
        }
        v.modifyQp(qp, attr, bits);
        attr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_RTS);
        bits = cm.initQpAttr(id, attr, mask);
        if (initiatorDepth >= 0) {
            IbvQpAttr.MAX_RD_ATOMIC.setU8(attr, initiatorDepth);
            bits |= Verbs.QP_MAX_QP_RD_ATOMIC;
        }
        v.modifyQp(qp, attr, bits);
    }

    /** ERR: every outstanding work request is flushed, nothing more moves on the wire. */
    void toError() {
        attr.fill((byte) 0);
        IbvQpAttr.QP_STATE.setInt(attr, Verbs.QPS_ERR);
        try {
            Verbs.get().modifyQp(qp, attr, Verbs.QP_STATE);
        } catch (VerbsException e) {
            LOG.warn("EP qp {}: cannot move the queue pair to the error state", num, e);
        }
    }

    /** Destroys the queue pair and forgets it in the router. */
    void destroy() {
        ep.ia.router().removeQp(ep, qp, num);
        NativeErrors.quietly("ibv_destroy_qp", () -> Verbs.get().destroyQp(qp));
        arena.close();
    }
}
