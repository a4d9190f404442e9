package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Structs.RdmaConnParam;

/**
 * The {@code rdma_conn_param} (and its private data) of an EP's connects and accepts, in native
 * memory; made with the device (its RDMA Read limits) and the EP's work (its queue pair and SRQ).
 */
final class ConnParam {
    /** RNR retry count 7: a send waits for the peer's receive without limit. */
    private static final int RNR_RETRY_INFINITE = 7;

    private final OfaDevice device;
    private final EpWork work;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment param = arena.allocate(RdmaConnParam.S.size(), 8);
    private final MemorySegment privateData = arena.allocate(PrivateData.TRANSPORT_MAX + 8, 8);
    private final MemorySegment destination = arena.allocate(RdmaCm.SOCKADDR_SIZE, 8);

    ConnParam(OfaDevice device, EpWork work) {
        this.device = device;
        this.work = work;
    }

    /** A connect's destination as {@code rdma_resolve_addr} takes it. */
    MemorySegment destination(InetSocketAddress address) {
        return RdmaCm.sockaddr(destination, address);
    }

    /**
     * The parameters with the private data as it goes on the wire, the RDMA Read depths within the
     * device's limits, transport and RNR retries 7, and the EP's queue pair.
     */
    MemorySegment fill(byte[] wire, int responderResources, int initiatorDepth) {
        param.fill((byte) 0);
        MemorySegment.copy(MemorySegment.ofArray(wire), 0, privateData, 0, wire.length);
        RdmaConnParam.PRIVATE_DATA.setPointer(param, privateData);
        RdmaConnParam.PRIVATE_DATA_LEN.setU8(param, wire.length);
        RdmaConnParam.RESPONDER_RESOURCES.setU8(param, Math.min(responderResources, device.maxQpRdAtom));
        RdmaConnParam.INITIATOR_DEPTH.setU8(param, Math.min(initiatorDepth, device.maxQpInitRdAtom));
        RdmaConnParam.RETRY_COUNT.setU8(param, 7);
        RdmaConnParam.RNR_RETRY_COUNT.setU8(param, RNR_RETRY_INFINITE);
        RdmaConnParam.SRQ.setU8(param, work.onSrq() ? 1 : 0);
        RdmaConnParam.QP_NUM.setInt(param, work.qpNum());
        return param;
    }

    void free() {
        arena.close();
    }
}
