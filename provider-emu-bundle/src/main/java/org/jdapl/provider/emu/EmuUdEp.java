package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.provider.emu.evd.Wakeups;

import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;

/**
 * An emulated endpoint of unreliable datagrams (DAT_IB_SERVICE_TYPE_UD) on the loopback fabric. A
 * connect is a UD exchange: the request goes to the consumer PSP on the qualifier as
 * IB_UD_CONNECTION_REQUEST ({@link UdRequest}); nobody listening is IB_UD_CONNECTION_ERROR. The
 * exchange merges the two IAs' lock domains, as an RC connect does, so that a datagram is delivered
 * under the one domain lock by the sending thread: it takes the target's next receive, or is dropped
 * when none is posted; one longer than the receive completes it LOCAL_LENGTH. The sender's UD_SEND
 * completion is SUCCESS once the datagram left. Receives complete as UD_RECV with the sender's
 * {@link AddressHandle}; disconnect and free flush them. RC operations fail MODEL_NOT_SUPPORTED.
 *
 * <p>On the tcp fabric the exchange is a CONNECT_REQ with the UD flag on a tcp connection of its own
 * ({@code TcpDatagrams}); datagrams to the peer go out on it at once ({@link EmuAh.Path}), and arrive
 * through {@link #receiveDatagram} under the receiving IA's domain lock, with the same loss rules.
 *
 * <p>Behaviours: EXT_08, EXT_10, EXT_11, EXT_12.
 */
public final class EmuUdEp extends EmuEp implements DatagramEndpoint {
    /** The largest datagram: the 4 KiB MTU of InfiniBand. */
    static final int MAX_DATAGRAM = 4096;
    private static final AtomicInteger QPNS = new AtomicInteger(0x100);

    private final int qpn = QPNS.getAndIncrement() & 0xff_ffff;
    private final EmuAh handle = new EmuAh(this);

    EmuUdEp(EmuIa ia, EmuPz pz, EmuEvd recvEvd, EmuEvd requestEvd, EmuEvd connectEvd, EpAttributes attributes) {
        super(ia, pz, recvEvd, requestEvd, connectEvd, null, attributes, EpState.UNCONNECTED, false);
    }

    /** The endpoint's queue pair number, which names it in address handles. */
    public int qpn() {
        return qpn;
    }

    /** The address handle peers send to this endpoint with. */
    EmuAh handle() {
        return handle;
    }

    /** Whether the endpoint may exchange address handles (not DISCONNECTED). */
    boolean exchanging() {
        return state() == EpState.UNCONNECTED || state() == EpState.CONNECTED;
    }

    void requireExchanging(String operation) {
        if (!exchanging()) {
            throw state().invalid(operation);
        }
    }

    /** An exchange completed: the endpoint is CONNECTED (domain lock held). */
    void exchanged() {
        if (state() == EpState.UNCONNECTED) {
            connection().state = EpState.CONNECTED;
        }
    }

    @Override
    public int maxDatagramSize() {
        return MAX_DATAGRAM;
    }

    @Override
    public void connect(SocketAddress remote, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                        ConnectFlag flag) {
        EmuIa ia = ia();
        do {
            ia.fabric().prepareConnect(ia, remote);
        } while (!ia.locked(() -> {
            checkLive();
            ExtPosts.requireDatagrams(ia, "dat_ep_connect (UD)");
            requireExchanging("dat_ep_connect");
            byte[] data = EmuLimits.privateData(privateData, 5);
            if (timeoutMicros <= 0 && timeoutMicros != Dat.TIMEOUT_INFINITE) {
                throw DatException.invalidParameter(4, "timeout " + timeoutMicros + " is not positive");
            }
            ia.fabric().checkRemoteAddress(remote);
            if (!ia.fabric().canConnect(ia, remote)) {
                return false;
            }
            evds().counts().inc(EpCounter.CONNECT.ordinal());
            if (ia.fabric().exchangeDatagrams(this, remote, connQual, data)) {
                return true;
            }
            EmuIa target = ia.fabric().resolve(remote);
            EmuEvd evd = target == null ? null : target.listeners().udEvd(connQual);
            if (evd == null) {
                ia.later(() -> evds().udConnection(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR,
                        null, null));
                return true;
            }
            UdRequest request = target.adopt(new UdRequest(target, this, data));
            target.post(evd, new DatEvent.UdConnection(evd, EventNumber.IB_UD_CONNECTION_REQUEST, null,
                    ExtensionType.UD_CONNECT_REQUEST, handle, request, data), true);
            return true;
        }));
    }

    /** Sends one datagram at once (domain lock taken). Behaviours: EXT_11, EXT_12. */
    @Override
    public void postSendDatagram(AddressHandle ah, List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        EmuIa ia = ia();
        ReentrantLock lock = ia.domain().acquire();
        try {
            checkLive();
            ExtPosts.requireDatagrams(ia, "dat_ib_post_send_ud");
            DtoChecks.flags(flags, 6);
            requireExchanging("dat_ib_post_send_ud");
            if (ah == null) {
                throw DatException.invalidParameter(4, "no address handle");
            }
            if (!(ah instanceof EmuAh target)) {
                throw new DatException(DatReturnType.INVALID_HANDLE, "an address handle of another provider");
            }
            DtoChecks.Checked c = checks.message(iov, true);
            if (c.length() > MAX_DATAGRAM) {
                throw DatException.invalidParameter(3, "a datagram of " + c.length() + " bytes is over "
                        + MAX_DATAGRAM);
            }
            DtoStatus status = Segments.usable(c.iov()) ? DtoStatus.SUCCESS : DtoStatus.LOCAL_PROTECTION;
            if (status == DtoStatus.SUCCESS) {
                if (target.ep() != null) {
                    deliver(target.ep(), c.iov(), c.length());
                } else {
                    target.path().send(qpn, target.qpn(), c.iov(), c.length());
                }
            }
            evds().extendedCompleted(false, cookie, WorkRequest.bitsOf(flags), status,
                    status == DtoStatus.SUCCESS ? c.length() : 0, ExtensionType.UD_SEND, 0, null);
        } finally {
            Wakeups.release(lock);
        }
    }

    /**
     * The datagram reaches {@code target}'s next receive whole, one datagram to one receive, or is
     * lost (no receive, target gone). Behaviours: EXT_08, EXT_11.
     */
    private void deliver(EmuUdEp target, List<LmrTriplet> iov, long length) {
        if (target.ia().domain().sameAs(ia().domain())) {
            target.land(length, r -> Segments.copy(iov, r, length), handle);
        }
    }

    /**
     * A datagram of {@code payload} from the remote endpoint {@code from} arrived for this endpoint
     * (tcp fabric, domain lock held): it takes the next receive, or is lost.
     *
     * <p>Behaviours: EXT_08, EXT_11, EXT_12.
     */
    public void receiveDatagram(MemorySegment payload, EmuAh from) {
        long length = payload.byteSize();
        land(length, r -> Segments.copy(r, payload, 0, length, false), from);
    }

    /** One datagram into the next receive (domain lock held); lost if none is posted or the EP no longer exchanges. */
    private void land(long length, java.util.function.Consumer<List<LmrTriplet>> copy, EmuAh from) {
        if (isFreed() || !exchanging()) {
            return;
        }
        WorkRequest.Recv r = queues().nextReceive();
        if (r == null) {
            return;
        }
        queues().takeReceive();
        r.checkNotCompleted();
        DtoStatus status = length > r.capacity ? DtoStatus.LOCAL_LENGTH
                : Segments.usable(r.iov) ? DtoStatus.SUCCESS : DtoStatus.LOCAL_PROTECTION;
        if (status == DtoStatus.SUCCESS) {
            copy.accept(r.iov);
        }
        evds().extendedCompleted(true, r.cookie, r.flagBits(), status, status == DtoStatus.SUCCESS ? length : 0,
                ExtensionType.UD_RECV, 0, from);
        r.markCompleted();
    }

    /**
     * The active side's exchange on another IA was accepted (domain lock held): CONNECTED, and
     * IB_UD_CONNECTION_ESTABLISHED with the passive endpoint's handle. Behaviours: EXT_08.
     */
    public void exchangeAccepted(EmuAh remote, byte[] privateData) {
        if (isFreed() || !exchanging()) {
            return;
        }
        exchanged();
        evds().udConnection(EventNumber.IB_UD_CONNECTION_ESTABLISHED, ExtensionType.UD_REMOTE_AH, remote, privateData);
    }

    /**
     * The active side's exchange on another IA failed (domain lock held): IB_UD_CONNECTION_REJECT with
     * the rejecter's private data, or IB_UD_CONNECTION_ERROR (nobody listening, unreachable, the
     * transport failed). Behaviours: EXT_10.
     */
    public void exchangeFailed(boolean rejected, byte[] privateData) {
        if (rejected) {
            evds().udConnection(EventNumber.IB_UD_CONNECTION_REJECT, ExtensionType.UD_CONNECT_REJECT, null,
                    privateData);
        } else {
            evds().udConnection(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR, null, null);
        }
    }

    /**
     * The active side of a UD exchange from another IA, as the passive IA's {@link UdRequest} sees it:
     * the transport that carries its answer and then its datagrams (tcp fabric).
     */
    public interface Exchange {
        /** The active endpoint's handle, reached on this exchange's transport. */
        EmuAh handle();

        /** Whether the active side is gone (its transport failed): an accept reports IB_UD_CONNECTION_ERROR. */
        boolean gone();

        /** Accepted by {@code passive} with {@code privateData}: the active side learns the passive qpn. */
        void accepted(EmuUdEp passive, byte[] privateData);

        /** Rejected with {@code privateData}. */
        void rejected(byte[] privateData);
    }

    /** Ends the endpoint's exchanges: DISCONNECTED, its receives flushed. */
    @Override
    public void disconnect(CloseFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(2, "no close flag");
        }
        ia().locked(() -> {
            checkLive();
            if (state() == EpState.DISCONNECTED) {
                return;
            }
            evds().counts().inc(EpCounter.DISCONNECT.ordinal());
            connection().state = EpState.DISCONNECTED;
            queues().flush();
            evds().connection(EventNumber.CONNECTION_DISCONNECTED, null);
        });
    }

    private static DatException rcOnly(String operation) {
        return new DatException(DatReturnType.MODEL_NOT_SUPPORTED, operation
                + " on a datagram endpoint; it sends with dat_ib_post_send_ud");
    }

    @Override
    public void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos) {
        throw rcOnly("dat_ep_dup_connect");
    }

    @Override
    public void commonConnect(SocketAddress remote, long timeoutMicros, byte[] privateData) {
        throw rcOnly("dat_ep_common_connect");
    }

    @Override
    public void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags,
                                       boolean invalidate, int rmrContext) {
        throw rcOnly("dat_ep_post_send");
    }

    @Override
    public void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        throw rcOnly("dat_ep_post_rdma_read");
    }

    @Override
    public void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        throw rcOnly("dat_ep_post_rdma_read_to_rmr");
    }

    @Override
    public void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        throw rcOnly("dat_ep_post_rdma_write");
    }

    @Override
    public void postFetchAndAdd(long add, LmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        throw rcOnly("dat_ib_post_fetch_and_add");
    }

    @Override
    public void postCompareAndSwap(long compare, long swap, LmrTriplet local, long cookie, RmrTriplet remote,
                                   Set<CompletionFlag> flags) {
        throw rcOnly("dat_ib_post_cmp_and_swap");
    }

    @Override
    public void postRdmaWriteWithImmediate(List<LmrTriplet> iov, long cookie, RmrTriplet remote, int immediateData,
                                           Set<CompletionFlag> flags) {
        throw rcOnly("dat_ib_post_rdma_write_immed");
    }

    @Override
    int postBind(EmuRmr rmr, LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges,
                 VaType vaType, long cookie, Set<CompletionFlag> flags) {
        throw rcOnly("dat_rmr_bind");
    }
}
