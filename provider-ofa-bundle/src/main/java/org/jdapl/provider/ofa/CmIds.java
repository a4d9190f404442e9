package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Structs.RdmaConnParam;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rdma_cm IDs of an IA's service points and connections: created on the IA's event channel and
 * bound to the IA address ({@code rdma_create_id}, {@code rdma_bind_addr}), listening
 * ({@code rdma_listen}), destroyed; and the {@code rdma_conn_param} of a connect or accept
 * ({@link ConnParam}).
 */
final class CmIds {
    private static final Logger LOG = LoggerFactory.getLogger(CmIds.class);
    /** RNR retry count 7: a send waits for the peer's receive without limit. */
    private static final int RNR_RETRY_INFINITE = 7;

    private CmIds() {
    }

    /**
     * An ID bound to the IA address and {@code port} (0: any); MODEL_NOT_SUPPORTED without
     * librdmacm, INSUFFICIENT_RESOURCES if rdma_cm refuses it, a bind error as {@link VerbsException}.
     */
    static MemorySegment bound(OfaIa ia, int port, String what) {
        if (ia.cmChannel().address() == 0) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, what + " needs rdma_cm: "
                    + RdmaCm.unavailableReason());
        }
        RdmaCm cm = RdmaCm.get();
        MemorySegment id;
        try {
            id = cm.createId(ia.cmChannel());
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.NO_SUBTYPE, what + " (rdma_create_id)", e);
        }
        try {
            cm.bindAddr(id, new InetSocketAddress(ia.inetAddress().getAddress(), port));
            return id;
        } catch (VerbsException e) {
            destroyQuietly(id);
            throw e;
        }
    }

    /**
     * A listening ID on {@code port} (0: any); a port in use fails CONN_QUAL_IN_USE, or
     * CONN_QUAL_UNAVAILABLE when no port is free.
     *
     * <p>Behaviours: OBJ_06.
     */
    static MemorySegment listening(OfaIa ia, int port, long connQual, String what) {
        MemorySegment id;
        try {
            id = bound(ia, port, what);
            try {
                RdmaCm.get().listen(id, 1024);
            } catch (VerbsException e) {
                destroyQuietly(id);
                throw e;
            }
            return id;
        } catch (VerbsException e) {
            if (e.errno() == Errno.EADDRINUSE) {
                throw port == 0
                        ? new DatException(DatReturnType.CONN_QUAL_UNAVAILABLE, DatReturnSubtype.NO_SUBTYPE,
                                "no free connection qualifier", e)
                        : new DatException(DatReturnType.CONN_QUAL_IN_USE, DatReturnSubtype.NO_SUBTYPE,
                                "connection qualifier " + connQual + " (port " + port + ") is in use on "
                                        + ia.inetAddress(), e);
            }
            throw NativeErrors.resources(DatReturnSubtype.NO_SUBTYPE, what + " (rdma_bind_addr/rdma_listen)", e);
        }
    }

    static void destroyQuietly(MemorySegment id) {
        try {
            RdmaCm.get().destroyId(id);
        } catch (VerbsException e) {
            LOG.debug("rdma_destroy_id failed", e);
        }
    }

    /** The {@code rdma_conn_param} (and its private data) of an EP's connects and accepts, in native memory. */
    static final class ConnParam {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment param = arena.allocate(RdmaConnParam.S.size(), 8);
        private final MemorySegment privateData = arena.allocate(PrivateData.TRANSPORT_MAX + 8, 8);
        private final MemorySegment destination = arena.allocate(RdmaCm.SOCKADDR_SIZE, 8);

        /** A connect's destination as {@code rdma_resolve_addr} takes it. */
        MemorySegment destination(InetSocketAddress address) {
            return RdmaCm.sockaddr(destination, address);
        }

        /**
         * The parameters with the private data as it goes on the wire, the RDMA Read depths within the
         * device's limits, transport and RNR retries 7, and the EP's queue pair.
         */
        MemorySegment fill(OfaEp ep, byte[] wire, int responderResources, int initiatorDepth) {
            OfaDevice device = ep.ia.device();
            param.fill((byte) 0);
            MemorySegment.copy(MemorySegment.ofArray(wire), 0, privateData, 0, wire.length);
            RdmaConnParam.PRIVATE_DATA.setPointer(param, privateData);
            RdmaConnParam.PRIVATE_DATA_LEN.setU8(param, wire.length);
            RdmaConnParam.RESPONDER_RESOURCES.setU8(param, Math.min(responderResources, device.maxQpRdAtom));
            RdmaConnParam.INITIATOR_DEPTH.setU8(param, Math.min(initiatorDepth, device.maxQpInitRdAtom));
            RdmaConnParam.RETRY_COUNT.setU8(param, 7);
            RdmaConnParam.RNR_RETRY_COUNT.setU8(param, RNR_RETRY_INFINITE);
            RdmaConnParam.SRQ.setU8(param, ep.binding().srq() != null ? 1 : 0);
            RdmaConnParam.QP_NUM.setInt(param, ep.queuePair().num());
            return param;
        }

        void free() {
            arena.close();
        }
    }
}
