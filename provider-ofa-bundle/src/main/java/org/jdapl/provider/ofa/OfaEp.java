package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;

/**
 * An EP: an RC queue pair ({@code ibv_create_qp}) whose send queue completes on the request EVD's
 * CQ and receive queue on the receive EVD's CQ. This version of the provider creates, queries and
 * frees endpoints; connection establishment over rdma_cm and data transfer are not in it yet, and
 * those calls fail MODEL_NOT_SUPPORTED saying so. The EP therefore stays UNCONNECTED.
 */
final class OfaEp extends OfaHandle implements Endpoint {
    static final String NO_CONNECTIONS =
            "the ofa provider does not establish connections yet (rdma_cm connect/accept is not in this version)";
    static final String NO_DATA =
            "the ofa provider does not transfer data yet (posting work requests needs a connected EP, "
                    + "which this version cannot establish)";

    final OfaIa ia;
    final OfaPz pz;
    final MemorySegment qp;
    final int qpNum;
    final OfaEvd recvEvd;
    final OfaEvd requestEvd;
    final OfaEvd connectEvd;
    final EpAttributes attributes;
    private volatile EpState state = EpState.UNCONNECTED;

    OfaEp(OfaIa ia, OfaPz pz, MemorySegment qp, int qpNum, OfaEvd recvEvd, OfaEvd requestEvd, OfaEvd connectEvd,
          EpAttributes attributes) {
        super(HandleType.EP);
        this.ia = ia;
        this.pz = pz;
        this.qp = qp;
        this.qpNum = qpNum;
        this.recvEvd = recvEvd;
        this.requestEvd = requestEvd;
        this.connectEvd = connectEvd;
        this.attributes = attributes;
    }

    EpState state() {
        return state;
    }

    @Override
    public EpParam query() {
        live();
        return new EpParam(ia, state, ia.address(), 0, null, 0, pz, recvEvd, requestEvd, connectEvd, null,
                attributes);
    }

    /** {@code dat_ep_modify}: not in this version (it would recreate the queue pair). */
    @Override
    public void modify(EpAttributes attrs, EventDispatcher recv, EventDispatcher request, EventDispatcher connect) {
        live();
        throw unsupported("dat_ep_modify: the ofa provider cannot change the EVDs or attributes of an "
                + "existing queue pair yet");
    }

    @Override
    public void connect(SocketAddress remoteAddress, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                        ConnectFlag flag) {
        live();
        if (state != EpState.UNCONNECTED) {
            throw state.invalid("dat_ep_connect");
        }
        throw unsupported("dat_ep_connect: " + NO_CONNECTIONS);
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos) {
        live();
        throw unsupported("dat_ep_dup_connect: " + NO_CONNECTIONS);
    }

    @Override
    public void commonConnect(SocketAddress remoteAddress, long timeoutMicros, byte[] privateData) {
        live();
        throw unsupported("dat_ep_common_connect: " + NO_CONNECTIONS);
    }

    /** {@code dat_ep_disconnect}: an EP of this version is never connected, so INVALID_STATE (DISC_11). */
    @Override
    public void disconnect(CloseFlag flag) {
        live();
        if (flag == null) {
            throw DatException.invalidParameter(2, "null disconnect flag");
        }
        throw state.invalid("dat_ep_disconnect");
    }

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        live();
        throw unsupported("dat_ep_post_send: " + NO_DATA);
    }

    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        live();
        throw unsupported("dat_ep_post_send_with_invalidate: " + NO_DATA);
    }

    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        live();
        throw unsupported("dat_ep_post_recv: " + NO_DATA);
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw unsupported("dat_ep_post_rdma_read: " + NO_DATA);
    }

    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw unsupported("dat_ep_post_rdma_read_to_rmr: " + NO_DATA);
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw unsupported("dat_ep_post_rdma_write: " + NO_DATA);
    }

    @Override
    public EpStatus status() {
        live();
        return new EpStatus(state, true, true);
    }

    @Override
    public void free() {
        ia.freeEp(this);
    }

    /** {@code dat_ep_reset}: only a DISCONNECTED EP can be reset, and this version never gets there. */
    @Override
    public void reset() {
        live();
        if (state != EpState.DISCONNECTED) {
            throw state.invalid("dat_ep_reset");
        }
        state = EpState.UNCONNECTED;
    }

    @Override
    public RecvQuery recvQuery() {
        live();
        throw unsupported("dat_ep_recv_query: the EP has no shared receive queue (the ofa provider has no SRQ "
                + "support yet)");
    }

    @Override
    public void setWatermark(int softHighWatermark, int hardHighWatermark) {
        live();
        throw unsupported("dat_ep_set_watermark: the EP has no shared receive queue (the ofa provider has no SRQ "
                + "support yet)");
    }

    static DatException unsupported(String what) {
        return new DatException(DatReturnType.MODEL_NOT_SUPPORTED, what);
    }
}
