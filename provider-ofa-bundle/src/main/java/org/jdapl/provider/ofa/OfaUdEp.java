package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Counters;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.Qos;
import org.jdapl.provider.ofa.UdAddressing.OfaAh;
import org.jdapl.provider.ofa.verbs.Structs.IbvRecvWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSendWr;
import org.jdapl.provider.ofa.verbs.Structs.IbvSge;
import org.jdapl.provider.ofa.verbs.Verbs;

/**
 * A datagram endpoint (DAT_IB_SERVICE_TYPE_UD) on verbs, as OFED's uDAPL makes one: an
 * {@code IBV_QPT_UD} queue pair with rdma_cm's UD qkey ({@code RDMA_UDP_QKEY}), in RTS from its
 * creation, on the EP's CQs ({@link UdQueuePair}). A connect is a SIDR exchange on an RDMA_PS_UDP ID ({@link UdExchange}),
 * which hands out an {@link AddressHandle}; {@code dat_ib_post_send_ud} posts an {@code IBV_WR_SEND}
 * with {@code wr.ud} (the handle's {@code ibv_ah}, the peer's queue pair and qkey). Every receive
 * gets a 40-byte slot of the endpoint's own registered GRH area as its first segment, so that the
 * GRH the device writes ahead of a datagram never lands in the consumer's buffer; its completion,
 * UD_RECV, reports the payload's length and the sender ({@code src_qp}, the GRH's source address).
 * The device applies the loss rules: a datagram finding no receive is dropped, one longer than the
 * receive completes it {@code IBV_WC_LOC_LEN_ERR}. The EP's maximum message size is at most the path
 * MTU ({@link EpLimits#datagram}); a longer datagram is refused at the post (INVALID_PARAMETER).
 * Disconnect moves the queue pair to the error state: its receives flush, datagrams sent to it are
 * dropped; no DISCONNECTED event comes, as none comes from OFED's uDAPL, whose
 * {@code dat_ep_disconnect} returns at once for an EP that is not RC: a datagram endpoint has no
 * connection whose end an event could report. RC operations fail MODEL_NOT_SUPPORTED.
 * Lock order: the IA's lock, a CQ's poll lock, this endpoint's lock, an EVD's queue lock.
 *
 * <p>The data path reads top to bottom here (posts, completions, the flush); the outstanding requests,
 * the receives' GRH slots and the completions' events are in {@link UdWorkRequests}, the exchange and
 * the address handles in {@link UdExchange} and {@link UdAddressing}.
 *
 * <p>Behaviours: EXT_08, EXT_10, EXT_11, EXT_12.
 */
final class OfaUdEp extends UdRefusals implements IaObjects.Owned, OfaRouter.DatagramQueuePair {
    private static final long SGE = IbvSge.S.size();

    final OfaIa ia;
    final OfaPz pz;
    private final EpBinding binding;
    /** The request and receive EVDs, fixed for the endpoint's life, and the room of their CQs. */
    private final OfaEvd sendEvd;
    private final OfaEvd recvEvd;
    private final CqRoom sendRoom;
    private final CqRoom recvRoom;
    final ReentrantLock lock = new ReentrantLock();
    private final Counts counts = Counts.of(EpCounter.class);
    final UdAddressing addressing = new UdAddressing(this);
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendWr;
    private final MemorySegment recvWr;
    private final MemorySegment sendSges;
    private final MemorySegment recvSges;
    private final MemorySegment badWr;
    /** The outstanding work requests, the receives' GRH slots, and the completions' events. Guarded by {@link #lock}. */
    private final UdWorkRequests requests;
    private final UdQueuePair qp;
    private final int qpNum;
    /** The largest datagram: the EP's maximum message size, which is at most the path MTU. */
    private final int maxDatagram;
    volatile EpState state = EpState.UNCONNECTED;
    private InetSocketAddress lastPeer;

    private OfaUdEp(OfaIa ia, EpBinding b) {
        this.ia = ia;
        this.pz = b.pz();
        this.binding = b;
        this.sendEvd = b.requestEvd();
        this.recvEvd = b.recvEvd();
        this.sendRoom = sendEvd.room();
        this.recvRoom = recvEvd.room();
        EpAttributes a = b.attributes();
        sendWr = arena.allocate(IbvSendWr.S.size(), 8);
        recvWr = arena.allocate(IbvRecvWr.S.size(), 8);
        sendSges = arena.allocate(SGE * Math.max(1, a.maxRequestIov()), 8);
        recvSges = arena.allocate(SGE * (a.maxRecvIov() + 1), 8);
        badWr = arena.allocate(8, 8);
        maxDatagram = (int) a.maxMessageSize();
        try {
            requests = new UdWorkRequests(this, addressing, counts, arena, pz.pd, Math.max(1, a.maxRecvDtos()));
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        try {
            qp = new UdQueuePair(ia.device(), pz.pd, sendEvd.cqSegment(), recvEvd.cqSegment(), a);
        } catch (RuntimeException e) {
            requests.destroy();
            arena.close();
            throw e;
        }
        qpNum = qp.num();
    }

    /** {@code dat_ep_create} with DAT_IB_SERVICE_TYPE_UD. */
    static OfaUdEp create(OfaIa ia, ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                          EventDispatcher connectEvd, EpAttributes attributes) {
        EpAttributes attrs = EpLimits.datagram(ia.device(), attributes == null ? EpLimits.defaults(ia.device())
                : EpLimits.withinRdmaLimit(ia.device(), attributes));
        return ia.locked(() -> {
            OfaPz p = ia.ownPz(pz, 2);
            OfaEvd recv = ia.ownEvd(recvEvd, DatReturnSubtype.INVALID_HANDLE_EVD_RECV, EvdFlag.DTO);
            OfaEvd request = ia.ownEvd(requestEvd, DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST, EvdFlag.DTO);
            OfaEvd connect = ia.ownEvd(connectEvd, DatReturnSubtype.INVALID_HANDLE_EVD_CONN, EvdFlag.CONNECTION);
            if (recv == null || request == null || connect == null) {
                throw DatException.invalidParameter(3, "a datagram endpoint needs receive, request and connect EVDs");
            }
            EpLimits.check(ia.device(), attrs);
            OfaUdEp ep = new OfaUdEp(ia, new EpBinding(p, recv, request, connect, null, attrs));
            ia.router().addUdQp(ep, ep.qpNum);
            ep.binding.useQueues();
            ep.binding.useConnectEvd();
            ia.objects().add(HandleType.EP, ep);
            return ep;
        });
    }

    int qpNum() {
        return qpNum;
    }

    OfaEvd connectEvd() {
        return binding.connectEvd();
    }

    @Override
    public int maxDatagramSize() {
        return maxDatagram;
    }

    // ---- UD exchanges ----

    /** {@code dat_ep_connect} of a datagram endpoint: a UD exchange with the PSP at the qualifier. */
    @Override
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] data, Qos qos,
                        ConnectFlag flag) {
        live();
        InetSocketAddress target = ConnectArguments.target(remote);
        ConnectArguments.check(timeoutMicros, qos, flag);
        byte[] pd = ia.wire.check(data, 5);
        lock.lock();
        try {
            live();
            requireExchanging("dat_ep_connect");
            InetSocketAddress to = new InetSocketAddress(target.getAddress(), PrivateData.port(connQual));
            lastPeer = to;
            UdExchange.connect(this, to, pd);
            counts.inc(EpCounter.CONNECT);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] data) {
        live();
        InetSocketAddress target = ConnectArguments.commonTarget(remote);
        connect(target, target.getPort(), timeoutMicros, data, Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
    }

    /** Whether the endpoint may exchange and post (not DISCONNECTED). */
    void requireExchanging(String operation) {
        if (state == EpState.DISCONNECTED) {
            throw state.invalid(operation);
        }
    }

    /** An exchange ended (event thread, or the accepting consumer): the event on the connect EVD. */
    void exchanged(EventNumber number, ExtensionType type, OfaAh ah, byte[] data) {
        lock.lock();
        try {
            if (isFreed()) {
                return;
            }
            if (ah != null && state == EpState.UNCONNECTED) {
                state = EpState.CONNECTED;
            }
        } finally {
            lock.unlock();
        }
        OfaEvd evd = binding.connectEvd();
        evd.enqueue(new DatEvent.UdConnection(evd, number, this, type, ah, null, data));
    }

    /**
     * {@code dat_ep_disconnect}: the queue pair to the error state; its receives complete FLUSHED. No
     * connection event follows (OFED's uDAPL queues none for an EP that is not RC).
     */
    @Override
    public void disconnect(CloseFlag flag) {
        live();
        if (flag == null) {
            throw DatException.invalidParameter(2, "null disconnect flag");
        }
        lock.lock();
        try {
            live();
            if (state == EpState.DISCONNECTED) {
                return;
            }
            state = EpState.DISCONNECTED;
            counts.inc(EpCounter.DISCONNECT);
            qp.toError();
        } finally {
            lock.unlock();
        }
    }

    // ---- data transfer ----

    /** {@code dat_ib_post_send_ud}. Behaviours: EXT_08, EXT_11. */
    @Override
    public void postSendDatagram(AddressHandle ah, List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        live();
        if (ah == null) {
            throw DatException.invalidParameter(2, "no address handle");
        }
        if (iov == null || flags == null) {
            throw DatException.invalidParameter(3, "null segment list or completion flags");
        }
        lock.lock();
        try {
            live();
            if (!(ah instanceof OfaAh h) || h.owner != this) {
                throw DatException.invalidHandle(DatReturnSubtype.NO_SUBTYPE,
                        "an address handle this datagram endpoint did not hand out");
            }
            requireExchanging("dat_ib_post_send_ud");
            if (iov.size() > binding.attributes().maxRequestIov()) {
                throw DatException.invalidParameter(3, iov.size() + " segments exceed the EP's "
                        + binding.attributes().maxRequestIov());
            }
            long total = fill(sendSges, 0, iov);
            if (total > maxDatagram) {
                throw DatException.invalidParameter(3, "a datagram of " + total + " bytes is over the EP's maximum "
                        + maxDatagram + " (the path MTU at most)");
            }
            if (!sendRoom.reserve()) {
                throw WorkQueue.cqFull("request", sendRoom);
            }
            long wrId = requests.nextSend();
            sendWr.fill((byte) 0);
            IbvSendWr.WR_ID.setLong(sendWr, wrId);
            IbvSendWr.SG_LIST.setPointer(sendWr, sendSges);
            IbvSendWr.NUM_SGE.setInt(sendWr, iov.size());
            IbvSendWr.OPCODE.setInt(sendWr, Verbs.WR_SEND);
            IbvSendWr.SEND_FLAGS.setInt(sendWr, Verbs.SEND_SIGNALED);
            IbvSendWr.UD_AH.setPointer(sendWr, h.ah);
            IbvSendWr.UD_REMOTE_QPN.setInt(sendWr, h.qpn);
            IbvSendWr.UD_REMOTE_QKEY.setInt(sendWr, h.qkey);
            int r = ia.device().context.postSend(qp.address(), sendWr.address(), badWr.address());
            if (r != 0) {
                throw WorkQueue.postFailed("ibv_post_send (UD)", r, sendRoom);
            }
            requests.sent(wrId, cookie, total, !flags.contains(CompletionFlag.SUPPRESS));
            counts.incWithData(EpCounter.POST_SEND, total);
        } finally {
            lock.unlock();
        }
    }

    /** {@code dat_ep_post_recv}: the GRH slot first, then the consumer's segments. */
    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        live();
        if (iov == null || flags == null) {
            throw DatException.invalidParameter(2, "null segment list or completion flags");
        }
        lock.lock();
        try {
            live();
            if (iov.size() > binding.attributes().maxRecvIov()) {
                throw DatException.invalidParameter(2, iov.size() + " segments exceed the EP's "
                        + binding.attributes().maxRecvIov());
            }
            long total = fill(recvSges, 1, iov);
            int slot = requests.takeSlot();
            if (slot < 0) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the receive queue holds " + binding.attributes().maxRecvDtos() + " outstanding receives");
            }
            if (!recvRoom.reserve()) {
                requests.giveBack(slot);
                throw WorkQueue.cqFull("receive", recvRoom);
            }
            requests.grhSge(recvSges, slot);
            long wrId = requests.nextRecv();
            recvWr.fill((byte) 0);
            IbvRecvWr.WR_ID.setLong(recvWr, wrId);
            IbvRecvWr.SG_LIST.setPointer(recvWr, recvSges);
            IbvRecvWr.NUM_SGE.setInt(recvWr, iov.size() + 1);
            int r = ia.device().context.postRecv(qp.address(), recvWr.address(), badWr.address());
            if (r != 0) {
                requests.giveBack(slot);
                throw WorkQueue.postFailed("ibv_post_recv (UD)", r, recvRoom);
            }
            requests.received(wrId, cookie, total, slot);
            counts.incWithData(EpCounter.POST_RECV, total);
        } finally {
            lock.unlock();
        }
    }

    /** Writes the segments' SGEs from entry {@code first} on; PROTECTION_VIOLATION for a bad one. */
    private long fill(MemorySegment sges, int first, List<LmrTriplet> iov) {
        long total = 0;
        for (int i = 0; i < iov.size(); i++) {
            LmrTriplet t = iov.get(i);
            if (t == null) {
                throw DatException.invalidParameter(2, "null segment " + i);
            }
            long at = (first + i) * SGE;
            if (t.length() == 0) {
                sges.set(ValueLayout.JAVA_LONG, at + IbvSge.ADDR.offset(), 0L);
                sges.set(ValueLayout.JAVA_INT, at + IbvSge.LENGTH.offset(), 0);
                sges.set(ValueLayout.JAVA_INT, at + IbvSge.LKEY.offset(), 0);
                continue;
            }
            if (!(t.lmr() instanceof OfaLmr l) || l.ia != ia || l.pz != pz || l.isFreed()
                    || t.offset() < 0 || t.offset() + t.length() > l.segment().byteSize()) {
                throw new DatException(DatReturnType.PROTECTION_VIOLATION, "segment " + i
                        + " names no live LMR of the endpoint's PZ, or exceeds it");
            }
            sges.set(ValueLayout.JAVA_LONG, at + IbvSge.ADDR.offset(), l.segment().address() + t.offset());
            sges.set(ValueLayout.JAVA_INT, at + IbvSge.LENGTH.offset(), (int) t.length());
            sges.set(ValueLayout.JAVA_INT, at + IbvSge.LKEY.offset(), l.lkey());
            total += t.length();
        }
        return total;
    }

    /** A work completion of the queue pair (poll lock held): UD_SEND or UD_RECV on its EVD ({@link UdWorkRequests}). */
    @Override
    public void completed(OfaEvd cqEvd, long wc) {
        DatEvent event;
        lock.lock();
        try {
            if (isFreed() || !requests.outstanding(WorkCompletion.wrId(wc))) {
                return;
            }
            cqEvd.room().unreserve();
            event = requests.completed(cqEvd, wc);
        } finally {
            lock.unlock();
        }
        if (event != null) {
            cqEvd.enqueue(event);
        }
    }


    // ---- queries ----

    @Override
    public EpParam query() {
        live();
        InetSocketAddress peer = lastPeer;
        return new EpParam(ia, state, ia.address(), 0, peer, peer == null ? 0 : peer.getPort(), pz,
                binding.recvEvd(), binding.requestEvd(), binding.connectEvd(), null, binding.attributes());
    }

    @Override
    public Counters<EpCounter> queryCounters(boolean reset) {
        live();
        return Counts.query(EpCounter.class, reset, counts);
    }

    Counts counts() {
        return counts;
    }

    @Override
    public EpStatus status() {
        live();
        lock.lock();
        try {
            return new EpStatus(state, requests.idle(false), requests.idle(true));
        } finally {
            lock.unlock();
        }
    }

    // ---- free ----

    @Override
    public void free() {
        ia.free(this);
    }

    /** Frees the queue pair, its address handles and buffers (IA lock held); no further event. */
    @Override
    public void destroy() {
        lock.lock();
        try {
            markFreed();
        } finally {
            lock.unlock();
        }
        boolean wasLive = ia.objects().remove(HandleType.EP, this);
        UdExchange.forget(this);
        ia.router().removeUdQp(this, qpNum);
        qp.destroy();
        binding.pollCqs();
        lock.lock();
        try {
            int[] forgotten = requests.clear();
            sendRoom.unreserve(forgotten[0]);
            recvRoom.unreserve(forgotten[1]);
            addressing.destroy();
        } finally {
            lock.unlock();
        }
        if (wasLive) {
            binding.releaseQueues();
            binding.releaseConnectEvd();
        }
        requests.destroy();
        arena.close();
    }

    @Override
    public String toString() {
        return "UD EP qp " + qpNum + " " + state;
    }
}
