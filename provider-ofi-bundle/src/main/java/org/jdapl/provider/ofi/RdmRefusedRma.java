package org.jdapl.provider.ofi;

import org.jdapl.dat.DtoOperation;

/**
 * Tells an RDMA Write or Read the target refused on an RDM connection, which neither provider
 * reports as such: on shm the request never completes, on rxm it is cancelled with every other
 * ({@link RdmConnection} acts on the answers: the request completes REMOTE_ACCESS and the
 * connection breaks). The EP's lock is held for every call.
 *
 * <p>Behaviours: LMR_05, LMR_06.
 */
final class RdmRefusedRma {
    /** An RDMA Write or Read that shm neither completes nor fails for this long (plus its bytes' time) was refused by the target. */
    static final long RMA_BOUND_NANOS = 1_000_000_000L;
    /** The time a byte of an RDMA Write or Read is given on top of {@link #RMA_BOUND_NANOS}: 100 MB/s. */
    static final long RMA_NANOS_PER_BYTE = 10;
    /** {@code EACCES}: the error a refused RDMA Write or Read completes with (REMOTE_ACCESS). */
    static final int EACCES = 13;

    /** shm: the oldest request, an RDMA Write or Read, watched since {@link #watchedSince} ({@link #watch}); -1: none. */
    private long watchedRma = -1;
    private long watchedSince;
    /** rxm: the provider cancelled a request while connected, and the peer was asked ({@link #cancelled}). */
    private boolean transportEnded;
    /** rxm: the context of the oldest RDMA Write or Read the provider cancelled while connected, -1: none. */
    private long cancelledRma = -1;

    /** A new data endpoint: nothing is watched or cancelled. */
    void reset() {
        watchedRma = -1;
        transportEnded = false;
        cancelledRma = -1;
    }

    /**
     * shm: the context of the oldest request in {@code q} if it is an RDMA Write or Read that the
     * target refused, else -1 ({@code connected}: a CONNECTED shm connection; {@code lastHeard}: when
     * the peer was last heard from). shm 1.17's target checks an RMA's key, bounds and access
     * ({@code ofi_mr_map_verify} in {@code smr_progress_cmd_rma}, prov/shm/src/smr_progress.c) and on
     * a failure discards the command without writing its response, so the initiator's write or read
     * (delivery-complete: the response completes it) neither completes nor fails. The target takes
     * the commands of an endpoint in order, and a live peer answers the keepalive: an RDMA Write or
     * Read that has been the oldest request for {@link #RMA_BOUND_NANOS} plus
     * {@link #RMA_NANOS_PER_BYTE} per byte, while the peer was heard after it became the oldest, was
     * refused. Only shm: other providers report a refused RMA (tcp's target ends the connection).
     */
    long watch(DtoQueue q, boolean connected, long now, long lastHeard) {
        int s = connected ? q.oldest() : -1;
        if (s < 0 || q.deferred[s] != null || !rma(q, s)) {
            watchedRma = -1;
            return -1;
        }
        long seq = q.seqOf(s);
        if (seq != watchedRma) {
            watchedRma = seq;
            watchedSince = now;
            return -1;
        }
        if (lastHeard - watchedSince > 0 && now - watchedSince > RMA_BOUND_NANOS + q.lengths[s] * RMA_NANOS_PER_BYTE) {
            watchedRma = -1;
            return q.context(seq);
        }
        return -1;
    }

    /**
     * rxm: the provider cancelled the request of {@code context} in {@code q} (its slot {@code s})
     * while the connection was connected ({@code FI_ECANCELED}): the transport connection under it
     * ended. tcp's target ends it on an RDMA Write or Read it refuses ({@code ofi_mr_verify} fails in
     * {@code tcpx_op_write}/{@code tcpx_op_read_req}, then {@code tcpx_ep_disable}, 1.17
     * {@code prov/tcp/src/tcpx_progress.c}), and the initiator's tcp cancels every transfer in flight
     * ({@code tcpx_ep_flush_all_queues}), which rxm passes on: the error entry says
     * {@code FI_ECANCELED}, its {@code prov_errno} a stale errno; nothing tells a refusal from the
     * peer's disconnect (its data endpoint closed) or its death. So the request stays outstanding and
     * the oldest cancelled RDMA Write or Read is kept; true the first time, when the peer is to be
     * asked with a KEEPALIVE that it answers at once while its side is connected. A peer that
     * disconnected sent DISC before it closed its data endpoint, on the control endpoints' ordered
     * stream, so DISC arrives before any answer; an answer means the peer is connected and its side
     * ended the transport ({@link #answered}). A silent peer is the keepalive's.
     */
    boolean cancelled(DtoQueue q, int s, long context) {
        if (rma(q, s) && (cancelledRma < 0 || DtoQueue.seq(context) < DtoQueue.seq(cancelledRma))) {
            cancelledRma = context;
        }
        if (transportEnded) {
            return false;
        }
        transportEnded = true;
        return true;
    }

    /** Whether the peer was asked after a cancellation ({@link #cancelled}): its answer ends the connection. */
    boolean asked() {
        return transportEnded;
    }

    /**
     * The peer answered the question of {@link #cancelled}: the context of the oldest cancelled RDMA
     * Write or Read, which it refused (REMOTE_ACCESS), or -1 if none was cancelled.
     */
    long answered() {
        long refused = cancelledRma;
        cancelledRma = -1;
        return refused;
    }

    private static boolean rma(DtoQueue q, int s) {
        return q.ops[s] == DtoOperation.RDMA_WRITE || q.ops[s] == DtoOperation.RDMA_READ;
    }
}
