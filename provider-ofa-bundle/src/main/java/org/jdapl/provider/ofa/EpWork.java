package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;

/**
 * An EP's work: the queue pair and the send and receive queues on it, made on the EP's
 * {@link EpBinding}; for a provider-created EP all three are replaced at {@code dat_ep_modify} and
 * the queue pair comes at accept, for any EP a new queue pair at {@code dat_ep_reset}. It routes
 * each work completion to the queue that posted it, and tells the connection's end
 * (its terminal event) what is still outstanding. Guarded by the EP's lock (and the IA's lock
 * where it says so).
 */
final class EpWork {
    /** The EP the queues and queue pairs are made for, and its lock. */
    private final OfaEp ep;
    private final EpLock lock;
    /** The PZ, EVDs, SRQ and attributes, fixed once the EP has a queue pair. Guarded by the IA lock and the EP's lock. */
    private EpBinding binding;
    private SendQueue sends;
    private RecvQueue recvs;
    /** The queue pair, null for a provider-created EP until its request is accepted; replaced by reset. */
    private QueuePair qp;
    /** The number of {@link #qp}, which the router compares with each completion's. */
    private int qpNum = -1;
    private int generation;

    EpWork(OfaEp ep, EpLock lock, EpBinding binding) {
        this.ep = ep;
        this.lock = lock;
        this.binding = binding;
        this.sends = new SendQueue(ep, binding);
        this.recvs = new RecvQueue(ep, binding);
    }

    /** A consumer's new EP takes its queue pair in INIT and counts itself a user of its binding (IA lock held). */
    void attachFirstQp() {
        attachQp(QueuePair.create(ep, binding, "dat_ep_create"));
        coverAndUse();
        binding.useConnectEvd();
    }

    /** A provider-created EP's binding before it has a queue pair: new queues on it (IA and EP lock held). */
    void configure(EpBinding replacement) {
        binding = replacement;
        sends.freeNative();
        recvs.freeNative();
        sends = new SendQueue(ep, binding);
        recvs = new RecvQueue(ep, binding);
    }

    /**
     * The queue pair of a provider-created EP, made when its request is accepted, on the PZ and EVDs
     * {@code dat_ep_modify} gave it (IA and EP lock held): nothing if it has one; without a PZ or a
     * connect EVD INVALID_PARAMETER.
     */
    void attachForAccept(String what) {
        if (qp != null) {
            return;
        }
        if (binding.pz() == null || binding.pz().isFreed() || binding.connectEvd() == null) {
            throw DatException.invalidParameter(2, what + ": the provider-created EP needs a PZ and a"
                    + " connect EVD (dat_ep_modify) before its request is accepted");
        }
        attachQp(QueuePair.create(ep, binding, what));
        coverAndUse();
    }

    /** {@code dat_ep_reset}: a new queue pair replaces the one that carried the connection (EP lock held). */
    void replaceQp() {
        qp.destroy();
        attachQp(QueuePair.create(ep, binding, "dat_ep_reset"));
    }

    /** Takes the CQ room of the queues and counts the EP as a user of its PZ, EVDs and SRQ (IA lock held). */
    private void coverAndUse() {
        sends.cover();
        recvs.cover();
        binding.useQueues();
    }

    /** Takes a new queue pair (at create, accept of a provider-created EP, reset). EP lock or IA lock held. */
    private void attachQp(QueuePair q) {
        qp = q;
        qpNum = q.num();
        generation++;
        sends.attach(q, generation);
        recvs.attach(q, generation);
    }

    EpBinding binding() {
        return binding;
    }

    SendQueue sends() {
        return sends;
    }

    RecvQueue recvs() {
        return recvs;
    }

    /** Whether the EP takes its receives from an SRQ. */
    boolean onSrq() {
        return binding.srq() != null;
    }

    QueuePair queuePair() {
        return qp;
    }

    int qpNum() {
        return qpNum;
    }

    /** A work completion of the queue pair (poll lock held): to the queue its {@code wr_id} names. */
    void completed(OfaEvd evd, long wc, long wrId) {
        long tag = wrId & WorkRing.TAG_MASK;
        if (tag == WorkRing.SEND) {
            sends.completed(evd, wc, wrId);
        } else if (tag == WorkRing.RECV) {
            recvs.completed(evd, wc, wrId);
        } else {
            recvs.srqCompleted(evd, wc, wrId);
        }
    }

    /** Requests posted and not completed. */
    int outstandingSends() {
        return sends.outstanding();
    }

    /** Receives posted and not completed. */
    int outstandingRecvs() {
        return recvs.outstanding();
    }

    /** Retires unsignalled requests at the tail that will never complete (the connection has ended). */
    void retireUnsignalledTail() {
        sends.retireUnsignalledTail();
    }

    /** Completes FLUSHED the receives posted after the connection ended. */
    void flushLateRecvs() {
        recvs.flushLate();
    }

    /** The EVD of the connection events. */
    OfaEvd connectEvd() {
        return binding.connectEvd();
    }

    /** The request and receive EVDs (one if they are the same; null where the EP has none). */
    OfaEvd[] dtoEvds() {
        OfaEvd recv = binding.recvEvd();
        OfaEvd request = binding.requestEvd();
        return recv == request ? new OfaEvd[] {request} : new OfaEvd[] {recv, request};
    }

    /**
     * At {@code dat_ep_free} (IA lock held, the EP marked freed): the queue pair goes, completions
     * still in its CQs are polled (and dropped), the queues' CQ room and the uses of the binding are
     * given back ({@code wasLive}: the EP still counted as a user); then the native memory goes.
     */
    void destroy(boolean wasLive) {
        if (qp != null) {
            qp.destroy();
            binding.pollCqs();
            lock.lock();
            try {
                sends.uncover();
                recvs.uncover();
            } finally {
                lock.unlock();
            }
            if (wasLive) {
                binding.releaseQueues();
            }
        }
        if (wasLive) {
            binding.releaseConnectEvd();
        }
        freeNative();
    }

    /** The queues' native memory. */
    void freeNative() {
        sends.freeNative();
        recvs.freeNative();
    }
}
