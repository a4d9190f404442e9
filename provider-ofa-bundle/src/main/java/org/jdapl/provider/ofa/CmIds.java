package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rdma_cm IDs of an IA's service points and connections: created on the IA's event channel and
 * bound to the IA address ({@code rdma_create_id}, {@code rdma_bind_addr}), listening
 * ({@code rdma_listen}), destroyed. The {@code rdma_conn_param} of a connect or accept is
 * {@link ConnParam}.
 */
final class CmIds {
    private static final Logger LOG = LoggerFactory.getLogger(CmIds.class);

    private CmIds() {
    }

    /**
     * An ID on the IA's event {@code channel} bound to the IA {@code address} and {@code port} (0: any);
     * MODEL_NOT_SUPPORTED without librdmacm (a NULL channel), INSUFFICIENT_RESOURCES if rdma_cm refuses
     * it, a bind error as {@link VerbsException}.
     */
    static MemorySegment bound(MemorySegment channel, InetSocketAddress address, int port, String what) {
        if (channel.address() == 0) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, what + " needs rdma_cm: "
                    + RdmaCm.unavailableReason());
        }
        RdmaCm cm = RdmaCm.get();
        MemorySegment id;
        try {
            id = cm.createId(channel);
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.NO_SUBTYPE, what + " (rdma_create_id)", e);
        }
        try {
            cm.bindAddr(id, new InetSocketAddress(address.getAddress(), port));
            return id;
        } catch (VerbsException e) {
            destroyQuietly(id);
            throw e;
        }
    }

    /**
     * A listening ID on {@code port} (0: any) of the IA address; a port in use fails CONN_QUAL_IN_USE, or
     * CONN_QUAL_UNAVAILABLE when no port is free.
     *
     * <p>Behaviours: OBJ_06.
     */
    static MemorySegment listening(MemorySegment channel, InetSocketAddress address, int port, long connQual,
                                   String what) {
        MemorySegment id;
        try {
            id = bound(channel, address, port, what);
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
                                        + address, e);
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
}
