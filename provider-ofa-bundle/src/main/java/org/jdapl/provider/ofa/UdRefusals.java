package org.jdapl.provider.ofa;

import java.util.List;
import java.util.Set;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;

/**
 * What a datagram endpoint refuses, MODEL_NOT_SUPPORTED after the handle's check:
 * the RC data transfer operations (it sends with {@code dat_ib_post_send_ud}), {@code dat_ep_dup_connect},
 * {@code dat_ep_modify} (a verbs queue pair cannot change its PZ, CQs or sizes), {@code dat_ep_reset},
 * and the SRQ calls. Apart from the endpoint so that its class holds what it does.
 */
abstract class UdRefusals extends OfaHandle implements DatagramEndpoint {
    UdRefusals() {
        super(HandleType.EP);
    }

    private static DatException rcOnly(String operation) {
        return new DatException(DatReturnType.MODEL_NOT_SUPPORTED, operation
                + " on a datagram endpoint; it sends with dat_ib_post_send_ud");
    }

    @Override
    public void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        live();
        throw rcOnly("dat_ep_post_send");
    }

    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        live();
        throw rcOnly("dat_ep_post_send_with_invalidate");
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw rcOnly("dat_ep_post_rdma_read");
    }

    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw rcOnly("dat_ep_post_rdma_read_to_rmr");
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        live();
        throw rcOnly("dat_ep_post_rdma_write");
    }

    @Override
    public void postFetchAndAdd(long add, LmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> f) {
        live();
        throw rcOnly("dat_ib_post_fetch_and_add");
    }

    @Override
    public void postCompareAndSwap(long compare, long swap, LmrTriplet local, long cookie, RmrTriplet remote,
                                   Set<CompletionFlag> f) {
        live();
        throw rcOnly("dat_ib_post_cmp_and_swap");
    }

    @Override
    public void postRdmaWriteWithImmediate(List<LmrTriplet> iov, long cookie, RmrTriplet remote, int immediate,
                                           Set<CompletionFlag> f) {
        live();
        throw rcOnly("dat_ib_post_rdma_write_immed");
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] data, Qos qos) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_dup_connect on a datagram endpoint");
    }

    @Override
    public void modify(EpAttributes attrs, EventDispatcher recv, EventDispatcher request, EventDispatcher connect) {
        modify(null, attrs, recv, request, connect);
    }

    @Override
    public void modify(ProtectionZone newPz, EpAttributes attrs, EventDispatcher recv, EventDispatcher request,
                       EventDispatcher connect) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_modify: a verbs queue pair cannot change"
                + " its PZ, completion queues or queue sizes; create a new EP");
    }

    @Override
    public void reset() {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_reset of a datagram endpoint");
    }

    @Override
    public RecvQuery recvQuery() {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_recv_query: the EP has no SRQ");
    }

    @Override
    public void setWatermark(int softHighWatermark, int hardHighWatermark) {
        live();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_set_watermark: the EP has no SRQ");
    }
}
