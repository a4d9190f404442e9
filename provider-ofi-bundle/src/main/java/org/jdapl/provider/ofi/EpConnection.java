package org.jdapl.provider.ofi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.Arrays;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiInfo;

/**
 * The DAT connection state machine of one EP over libfabric's connection management: the endpoint
 * ({@code fi_endpoint}, bound to the IA's EQ and the EVDs' CQs, enabled, the waiting receives
 * posted), {@code fi_connect}/{@code fi_accept} with private data, and the EQ's entries:
 * {@code FI_CONNECTED} is ESTABLISHED (with the accept's private data on the active side; the private
 * data of connect and accept carry the credit header of {@link MsgCredits} before the consumer's),
 * {@code FI_SHUTDOWN} the peer's disconnect (DISCONNECTED; BROKEN when the peer did not set its
 * closing flag first: a reset, a refused RMA, the peer's death, {@link MsgCredits}) and an error entry a rejection
 * ({@code ECONNREFUSED}: PEER_REJECTED when the reject carries jdapl's header byte, else
 * NON_PEER_REJECTED), an unreachable peer ({@code EHOSTUNREACH}, {@code ENETUNREACH},
 * {@code ETIMEDOUT}: UNREACHABLE), a failed accept (ACCEPT_COMPLETION_ERROR) or a broken connection
 * (BROKEN).
 *
 * <p>The disconnect follows the DAT rules and the NetworkDirect scheme: a graceful disconnect waits
 * in DISCONNECT_PENDING until the last outstanding request completes; then, and at once for an
 * abrupt one or the peer's, the connection is shut down ({@code fi_shutdown}), the completions the
 * CQs already hold are read, every DTO still outstanding completes FLUSHED, the endpoint is closed,
 * and only then the one terminal event is queued: all completions precede it, and no byte moves
 * after it. The endpoint is never reused: a reset EP gets a new one at its next connection.
 *
 * <p>Behaviours: CONN_02, CONN_03, CONN_04, CONN_05, CONN_06, CONN_07, CONN_10, CONN_11, CONN_13, DISC_01,
 * DISC_04, DISC_05, DISC_06, DISC_08, DISC_10, DISC_11, DISC_12, DISC_13, DISC_14, DISC_15, DISC_16, DISC_17, DISC_18,
 * FREE_03, FREE_04.
 */
class EpConnection extends Connection implements OfiIa.CmTarget {
    /** The first byte of a consumer's reject private data. */
    static final byte REJECT_HEADER = 0x52;
    private static final int ENETUNREACH = 101;
    /** How long the consumer's disconnect waits for the peer to stop placing bytes of cut transfers. */
    private static final long PEER_SHUTDOWN_BOUND_NANOS = 2_000_000_000L;
    private static final int EHOSTUNREACH = 113;

    private long fid;
    private long cmKey;
    private long localPort;
    /** The connection's receive credits, null without an endpoint. */
    private MsgCredits credits;
    /** The peer's credit header (from the request on the passive side, from the accept on the active one). */
    private MsgCredits.Peer peerCredits = MsgCredits.Peer.NONE;
    /** The consumer disconnected this connection (not the peer, not a broken transport). */
    private boolean disconnecting;
    /** The active side had given up when this EP accepted (tcp: {@link TcpPeerCheck}); it never becomes CONNECTED. */
    private boolean acceptedTooLate;

    EpConnection(OfiEp ep) {
        super(ep);
    }

    @Override
    long fid() {
        return fid;
    }

    @Override
    long localPort() {
        return localPort;
    }

    /** Creates, binds and enables the endpoint; posts the receives that waited. The EP's lock is held. */
    private void open(long info) {
        long key = ep.ia.nextId();
        long f;
        FiInfo.deliveryComplete(info);
        try {
            f = FiCalls.endpoint(ep.ia.domain, info, key);
        } catch (FiException e) {
            throw FiErrors.toDat(e);
        }
        ep.ia.cmTargets.put(key, this);
        try {
            FiCalls.bind(f, ep.ia.eq, 0);
            OfiEvd r = ep.srq == null ? ep.recvEvd() : null;
            OfiEvd q = ep.requestEvd();
            if (ep.srq != null) {
                FiCalls.bind(f, ep.srq.cq, Fi.FI_RECV);
                FiCalls.bind(f, ep.srq.srq.srx, 0);
            }
            // Requests complete only when posted with FI_COMPLETION (EpPosts): an unsignalled one and a
            // count write cost no completion; errors are reported either way.
            if (r != null) {
                FiCalls.bind(f, r.cq, Fi.FI_RECV);
            }
            if (q != null) {
                FiCalls.bind(f, q.cq, Fi.FI_TRANSMIT | Fi.FI_SELECTIVE_COMPLETION);
            }
            FiCalls.enable(f);
            fid = f;
            cmKey = key;
            // verbs: the RC queue pair holds a send until a receive is posted (MsgCredits).
            boolean verbs = OfiExtensions.nativeWriteData(ep.ia);
            credits = new MsgCredits(ep.ia, ep.srq == null && !verbs);
            ep.data.credits = credits;
            ep.data.postDeferred(f, ep.attributes().maxRecvIov());
        } catch (FiException | DatException e) {
            ep.ia.cmTargets.remove(key);
            OfiIa.closeQuietly(f);
            fid = 0;
            dropCredits();
            throw e instanceof FiException fe ? FiErrors.toDat(fe) : (DatException) e;
        }
    }

    /** Closes the endpoint (after {@code fi_shutdown} if asked). The EP's lock is held. */
    private void close(boolean shutdown) {
        if (fid != 0) {
            if (shutdown) {
                FiCalls.shutdown(fid, 0);
            }
            ep.ia.cmTargets.remove(cmKey);
            OfiIa.closeQuietly(fid);
            fid = 0;
        }
        dropCredits();
    }

    private void dropCredits() {
        if (credits != null) {
            ep.data.credits = null;
            credits.close();
            credits = null;
        }
        peerCredits = MsgCredits.Peer.NONE;
    }

    /** CONNECTED, ESTABLISHED, and the count of receives posted goes to the peer (the EP's lock is held). */
    private void established(byte[] pd) {
        state = EpState.CONNECTED;
        ep.ia.progress.deadlines.remove(ep);
        queueEvent(EventNumber.CONNECTION_ESTABLISHED, pd);
        if (credits != null && !credits.established(fid, peerCredits)) {
            ep.ia.held.holding(ep, true);
        }
    }

    @Override
    void connect(InetSocketAddress target, long timeoutMicros, byte[] privateData) {
        synchronized (ep) {
            ep.live();
            if (state != EpState.UNCONNECTED) {
                throw DatException.invalidState(subtype(state), "dat_ep_connect in " + state);
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment addr = a.allocate(16, 8);
                FiInfo.putSockaddr(addr.address(), target);
                if (!openActive(addr.address())) {
                    // verbs: the route could not be resolved (no host answers for the address).
                    remote = target;
                    remotePort = target.getPort();
                    state = EpState.ACTIVE_CONNECTION_PENDING;
                    ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_UNREACHABLE, null));
                    return;
                }
                byte[] pd = credits.wire(privateData);
                int rc = FiCalls.connect(fid, addr.address(), OfiEp.nativeBytes(a, pd).address(), pd.length);
                if (rc == -ENETUNREACH || rc == -EHOSTUNREACH) {
                    // No route to the peer: the connect is refused at once; the consumer learns it as
                    // an event, as of an unreachable peer found later (CONN_06).
                    ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_UNREACHABLE, null));
                } else if (rc < 0) {
                    close(false);
                    throw FiErrors.toDat(rc, "fi_connect");
                } else {
                    localPort = name(a);
                }
            }
            remote = target;
            remotePort = target.getPort();
            state = EpState.ACTIVE_CONNECTION_PENDING;
            if (timeoutMicros != Dat.TIMEOUT_INFINITE && timeoutMicros < Long.MAX_VALUE / 1000) {
                ep.ia.progress.deadlines.put(ep, System.nanoTime() + timeoutMicros * 1000);
            }
        }
    }

    /**
     * Opens the active side's endpoint; false if the peer's address cannot be resolved. On libfabric's
     * verbs provider the endpoint is made from a copy of the IA's info that names the peer
     * ({@link FiInfo#withDest}): it resolves the route in {@code fi_endpoint}, and an address that no host
     * answers for fails there ({@code ETIMEDOUT}, {@code EHOSTUNREACH}, {@code ENETUNREACH}, CONN_06).
     */
    private boolean openActive(long sockaddr) {
        if (!"verbs".equals(FiInfo.providerName(ep.ia.info))) {
            open(ep.ia.info);
            return true;
        }
        long info = FiInfo.withDest(ep.ia.info, sockaddr);
        try {
            open(info);
            return true;
        } catch (DatException e) {
            if (e.getCause() instanceof FiException fe
                    && (fe.errno() == 110 || fe.errno() == EHOSTUNREACH || fe.errno() == ENETUNREACH)) {
                return false;
            }
            throw e;
        } finally {
            FiInfo.freeWithDest(info);
        }
    }

    private long name(Arena a) {
        MemorySegment sa = a.allocate(128, 8);
        MemorySegment len = a.allocate(8, 8);
        len.set(ValueLayout.JAVA_LONG, 0, 128);
        if (FiCalls.getname(fid, sa.address(), len.address()) == 0) {
            InetSocketAddress s = FiInfo.sockaddr(sa.address(), len.get(ValueLayout.JAVA_LONG, 0));
            return s == null ? 0 : s.getPort();
        }
        return 0;
    }

    /**
     * The passive side accepts a request ({@code info} of the FI_CONNREQ entry, {@code peerHeader} the
     * credit header of its private data) on this EP.
     */
    void accept(long info, byte[] privateData, InetSocketAddress peer, MsgCredits.Peer peerHeader) {
        synchronized (ep) {
            ep.live();
            if (state != EpState.UNCONNECTED && state != EpState.PASSIVE_CONNECTION_PENDING
                    && state != EpState.TENTATIVE_CONNECTION_PENDING) {
                throw DatException.invalidState(subtype(state), "dat_cr_accept on an EP in " + state);
            }
            open(info);
            try (Arena a = Arena.ofConfined()) {
                acceptedTooLate = "tcp".equals(FiInfo.providerName(info)) && TcpPeerCheck.peerClosed(name(a), peer);
                byte[] pd = credits.wire(privateData);
                int rc = FiCalls.accept(fid, OfiEp.nativeBytes(a, pd).address(), pd.length);
                if (rc < 0) {
                    close(false);
                    throw FiErrors.toDat(rc, "fi_accept");
                }
                localPort = name(a);
            }
            remote = peer;
            remotePort = peer == null ? 0 : peer.getPort();
            peerCredits = peerHeader;
            state = EpState.COMPLETION_PENDING;
            if (acceptedTooLate) {
                ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR, null));
            }
        }
    }

    /**
     * A completion of the EP is read before the EQ's {@code FI_CONNECTED} of an accepted connection
     * (the CQ and the EQ are read apart): the connection is established, and ESTABLISHED goes first,
     * so that no DTO completion of the connection precedes it on any EVD (the EP's lock is held).
     */
    @Override
    void completionBeforeConnected() {
        if (state == EpState.COMPLETION_PENDING && !acceptedTooLate) {
            established(new byte[0]);
        }
    }

    /**
     * Shuts the endpoint down, flushes what is left and queues the event (after the CQs were read).
     */
    @Override
    void end(EventNumber number, byte[] privateData) {
        long port;
        InetSocketAddress peer;
        synchronized (ep) {
            if (ep.freed || state == EpState.DISCONNECTED || state == EpState.UNCONNECTED
                    || state == EpState.RESERVED) {
                return;
            }
            boolean wasConnected = state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING;
            if (wasConnected && credits != null && number != EventNumber.CONNECTION_BROKEN) {
                credits.closing(fid);
            }
            boolean inFlight = disconnecting && wasConnected && !ep.data.requestIdle()
                    && "tcp".equals(FiInfo.providerName(ep.ia.info));
            state = EpState.DISCONNECTED;
            ep.ia.progress.deadlines.remove(ep);
            close(wasConnected);
            ep.data.flush();
            if (!inFlight) {
                queueEvent(number, privateData);
                return;
            }
            port = localPort;
            peer = remote;
        }
        // The consumer's disconnect cut transfers whose bytes may still be in the sockets: the peer's
        // provider places them until it reads the end of the stream, and then shuts its side down. The
        // event waits for that (bounded), so that no byte lands after it (DISC_15).
        TcpPeerCheck.awaitPeerShutdown(port, peer, PEER_SHUTDOWN_BOUND_NANOS);
        synchronized (ep) {
            if (!ep.freed && state == EpState.DISCONNECTED) {
                queueEvent(number, privateData);
            }
        }
    }

    @Override
    void disconnect(CloseFlag flag) {
        synchronized (ep) {
            if (state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING) {
                disconnecting = true;
            }
        }
        super.disconnect(flag);
    }

    /**
     * The connect time-out: UNREACHABLE if the peer never answered the transport's connection setup
     * (tcp: the socket is still in SYN_SENT, {@link TcpPeerCheck}; a silent host, CONN_06), else
     * TIMED_OUT (the peer's consumer did not answer the request, CONN_07).
     */
    @Override
    void timedOut() {
        boolean silent;
        synchronized (ep) {
            if (state != EpState.ACTIVE_CONNECTION_PENDING) {
                return;
            }
            silent = "tcp".equals(FiInfo.providerName(ep.ia.info)) && TcpPeerCheck.synSent(localPort, remote);
        }
        terminate(silent ? EventNumber.CONNECTION_UNREACHABLE : EventNumber.CONNECTION_TIMED_OUT, null);
    }

    @Override
    public void cmEvent(int event, long entry, long length) {
        if (event == Fi.FI_CONNECTED) {
            byte[] pd = OfiEp.bytes(entry + 16, length - 16);
            synchronized (ep) {
                if (ep.freed || (state != EpState.ACTIVE_CONNECTION_PENDING && state != EpState.COMPLETION_PENDING)) {
                    return;
                }
                boolean active = state == EpState.ACTIVE_CONNECTION_PENDING;
                if (!active && acceptedTooLate) {
                    return; // ACCEPT_COMPLETION_ERROR is on its way (accept)
                }
                if (active) {
                    peerCredits = MsgCredits.peerOf(pd);
                }
                established(active ? MsgCredits.consumerData(pd) : new byte[0]);
            }
        } else if (event == Fi.FI_SHUTDOWN) {
            EventNumber n;
            synchronized (ep) {
                n = switch (state) {
                    case ACTIVE_CONNECTION_PENDING -> EventNumber.CONNECTION_NON_PEER_REJECTED;
                    case COMPLETION_PENDING -> EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR;
                    // The peer's consumer disconnected (its closing flag is set), or the transport broke.
                    default -> credits == null || credits.peerDisconnected() ? EventNumber.CONNECTION_DISCONNECTED
                            : EventNumber.CONNECTION_BROKEN;
                };
            }
            terminate(n, null);
        }
    }

    @Override
    public void cmError(int err, byte[] data) {
        EventNumber n;
        byte[] pd = null;
        synchronized (ep) {
            switch (state) {
                case ACTIVE_CONNECTION_PENDING -> {
                    if (err == 111 && data.length >= 1 && data[0] == REJECT_HEADER) {
                        n = EventNumber.CONNECTION_PEER_REJECTED;
                        pd = Arrays.copyOfRange(data, 1, data.length);
                    } else if (err == 113 || err == 101 || err == 110) {
                        n = EventNumber.CONNECTION_UNREACHABLE;
                    } else {
                        n = EventNumber.CONNECTION_NON_PEER_REJECTED;
                    }
                }
                case COMPLETION_PENDING -> n = EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR;
                case CONNECTED, DISCONNECT_PENDING -> n = EventNumber.CONNECTION_BROKEN;
                default -> {
                    return;
                }
            }
        }
        terminate(n, pd);
    }

    @Override
    void release() {
        boolean wasConnected = state == EpState.CONNECTED || state == EpState.DISCONNECT_PENDING;
        close(wasConnected);
        state = EpState.DISCONNECTED;
    }

    @Override
    void reset() {
        if (state != EpState.DISCONNECTED) {
            throw DatException.invalidState(subtype(state), "dat_ep_reset in " + state);
        }
        state = EpState.UNCONNECTED;
        acceptedTooLate = false;
        disconnecting = false;
        remote = null;
        remotePort = 0;
        localPort = 0;
    }
}
