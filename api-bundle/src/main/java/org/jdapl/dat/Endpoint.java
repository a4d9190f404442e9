package org.jdapl.dat;

import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_EP_HANDLE: an Endpoint, one end of a reliable connection, with its receive and request
 * queues. DTOs of one direction are processed in order and every posted DTO completes exactly once
 * (successfully or with an error status), also on disconnect, reset, free and transport failure.
 */
@ProviderType
public interface Endpoint extends DatHandle {
    /**
     * {@code dat_ep_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_EP)
     */
    EpParam query();

    /**
     * {@code dat_ep_modify}: replaces the EP attributes and EVDs of an UNCONNECTED endpoint, or of a
     * provider-created one in TENTATIVE_CONNECTION_PENDING before it is accepted. A null argument
     * keeps the current value.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE in any other state; INVALID_PARAMETER;
     *         MODEL_NOT_SUPPORTED for a change the transport cannot make to an existing endpoint
     */
    void modify(EpAttributes attributes, EventDispatcher recvEvd, EventDispatcher requestEvd,
                EventDispatcher connectEvd);

    /**
     * {@code dat_ep_modify} with DAT_EP_FIELD_PZ_HANDLE: also places the endpoint in {@code pz}
     * (null keeps the current one). A provider-created endpoint (a {@link PspFlag#PROVIDER} PSP) has
     * no PZ until the consumer gives it one here; it can post DTOs only then.
     *
     * <p>This default serves providers whose endpoints cannot change PZ: it accepts the current PZ
     * (or null) and fails MODEL_NOT_SUPPORTED for another one.
     *
     * @throws DatException as {@link #modify(EpAttributes, EventDispatcher, EventDispatcher,
     *         EventDispatcher)}; INVALID_HANDLE (INVALID_HANDLE_PZ) for a freed or foreign PZ
     */
    default void modify(ProtectionZone pz, EpAttributes attributes, EventDispatcher recvEvd,
                        EventDispatcher requestEvd, EventDispatcher connectEvd) {
        if (pz != null && pz != query().pz()) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                    "dat_ep_modify: this provider cannot move an endpoint to another protection zone");
        }
        modify(attributes, recvEvd, requestEvd, connectEvd);
    }

    /**
     * {@code dat_ep_connect}: requests a connection to the service point listening on
     * {@code connQual} at {@code remoteAddress}. On success the EP is ACTIVE_CONNECTION_PENDING and
     * bound to a local port qualifier; the outcome arrives on the connect EVD as ESTABLISHED,
     * PEER_REJECTED, NON_PEER_REJECTED, UNREACHABLE or TIMED_OUT.
     *
     * @param timeoutMicros how long to wait for establishment, positive, or {@link Dat#TIMEOUT_INFINITE}
     * @param privateData bytes handed to the remote consumer in the connection request (may be empty)
     * @throws DatException INVALID_HANDLE; INVALID_STATE (subtype naming the state) if the EP is not
     *         UNCONNECTED; INVALID_ADDRESS for an address the provider can tell is invalid;
     *         INVALID_PARAMETER for a non-positive timeout or private data over the maximum;
     *         MODEL_NOT_SUPPORTED for a QoS or flag the provider does not support
     */
    void connect(SocketAddress remoteAddress, long connQual, long timeoutMicros, byte[] privateData, Qos qos,
                 ConnectFlag flag);

    /** {@code dat_ep_connect} with best-effort QoS and default flags. */
    default void connect(SocketAddress remoteAddress, long connQual, long timeoutMicros, byte[] privateData) {
        connect(remoteAddress, connQual, timeoutMicros, privateData, Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
    }

    /**
     * {@code dat_ep_dup_connect}: connects to the same remote endpoint as the connected {@code dup}.
     *
     * @throws DatException as {@link #connect}; INVALID_STATE if {@code dup} is not CONNECTED
     */
    void dupConnect(Endpoint dup, long timeoutMicros, byte[] privateData, Qos qos);

    /**
     * {@code dat_ep_common_connect}: connects to a {@link CommonServicePoint} by its full transport
     * address.
     *
     * @throws DatException as {@link #connect}
     */
    void commonConnect(SocketAddress remoteAddress, long timeoutMicros, byte[] privateData);

    /**
     * {@code dat_ep_disconnect}. ABRUPT flushes every outstanding DTO; GRACEFUL first lets outstanding
     * request DTOs complete (the EP is DISCONNECT_PENDING meanwhile) and then completes the
     * NetworkDirect handshake with the peer. Completion is reported by
     * CONNECTION_EVENT_DISCONNECTED on the connect EVD. A DISCONNECTED EP is left as it is.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER for a null flag; INVALID_STATE in
     *         UNCONNECTED, RESERVED, PASSIVE_CONNECTION_PENDING or TENTATIVE_CONNECTION_PENDING
     */
    void disconnect(CloseFlag flag);

    /**
     * {@code dat_ep_post_send}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE (e.g. DISCONNECT_PENDING); INVALID_PARAMETER
     *         for too many segments or a message over the maximum; PROTECTION_VIOLATION for an LMR of
     *         another PZ or a freed LMR; PRIVILEGES_VIOLATION; INSUFFICIENT_RESOURCES
     *         when the request queue is full
     */
    void postSend(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags);

    /**
     * {@code dat_ep_post_send_with_invalidate}: a send that also invalidates {@code rmrContext} at the
     * peer when {@code invalidate} is true.
     *
     * @throws DatException as {@link #postSend}
     */
    void postSendWithInvalidate(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags, boolean invalidate,
                                int rmrContext);

    /**
     * {@code dat_ep_post_recv}. Receives may be posted before the EP connects.
     *
     * @throws DatException as {@link #postSend}; INVALID_STATE for an EP with an SRQ
     */
    void postRecv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags);

    /**
     * {@code dat_ep_post_rdma_read}: reads {@code remote} of the peer into {@code iov}.
     *
     * @throws DatException as {@link #postSend}
     */
    void postRdmaRead(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags);

    /**
     * {@code dat_ep_post_rdma_read_to_rmr}: reads {@code remote} of the peer into a local region
     * named by an RMR triplet.
     *
     * @throws DatException as {@link #postSend}
     */
    void postRdmaReadToRmr(RmrTriplet local, long cookie, RmrTriplet remote, Set<CompletionFlag> flags);

    /**
     * {@code dat_ep_post_rdma_write}: writes {@code iov} into {@code remote} of the peer.
     *
     * @throws DatException as {@link #postSend}
     */
    void postRdmaWrite(List<LmrTriplet> iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags);

    /**
     * {@code dat_ep_post_send} with a pre-built, reusable {@link LocalIov}: the list is neither copied
     * nor re-checked per post. This default posts {@link LocalIov#triplets()}; a provider overrides it
     * to post without allocating.
     *
     * @throws DatException as {@link #postSend(List, long, Set)}; INVALID_PARAMETER for a null vector
     */
    default void postSend(LocalIov iov, long cookie, Set<CompletionFlag> flags) {
        postSend(triplets(iov), cookie, flags);
    }

    /**
     * {@code dat_ep_post_recv} with a pre-built, reusable {@link LocalIov}. This default posts
     * {@link LocalIov#triplets()}; a provider overrides it to post without allocating.
     *
     * @throws DatException as {@link #postRecv(List, long, Set)}; INVALID_PARAMETER for a null vector
     */
    default void postRecv(LocalIov iov, long cookie, Set<CompletionFlag> flags) {
        postRecv(triplets(iov), cookie, flags);
    }

    /**
     * {@code dat_ep_post_rdma_read} with a pre-built, reusable {@link LocalIov} and a reusable
     * {@link RmrTriplet}. This default posts {@link LocalIov#triplets()}; a provider overrides it to
     * post without allocating.
     *
     * @throws DatException as {@link #postRdmaRead(List, long, RmrTriplet, Set)}; INVALID_PARAMETER for
     *         a null vector
     */
    default void postRdmaRead(LocalIov iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        postRdmaRead(triplets(iov), cookie, remote, flags);
    }

    /**
     * {@code dat_ep_post_rdma_write} with a pre-built, reusable {@link LocalIov} and a reusable
     * {@link RmrTriplet}. This default posts {@link LocalIov#triplets()}; a provider overrides it to
     * post without allocating.
     *
     * @throws DatException as {@link #postRdmaWrite(List, long, RmrTriplet, Set)}; INVALID_PARAMETER for
     *         a null vector
     */
    default void postRdmaWrite(LocalIov iov, long cookie, RmrTriplet remote, Set<CompletionFlag> flags) {
        postRdmaWrite(triplets(iov), cookie, remote, flags);
    }

    /**
     * {@code dat_ib_post_fetch_and_add}: atomically adds {@code addValue} to the 64-bit value at
     * {@code remote} of the peer (8 bytes, 8-byte aligned, its RMR granting
     * {@link MemPriv#REMOTE_ATOMIC}) and writes the value it held before into {@code local} (8 bytes,
     * granting {@link MemPriv#LOCAL_WRITE}). It is atomic with respect to every other atomic on the
     * same target, whichever endpoint posted it. It completes on the request EVD as an
     * {@link DatEvent.ExtendedDtoCompletion} of {@link ExtensionType#FETCH_AND_ADD}, length 8; a
     * target the RMR does not grant completes with {@link DtoStatus#REMOTE_ACCESS}. Offered where
     * {@link ProviderAttributes#offers} {@link ProviderAttributes#DAT_IB_FETCH_AND_ADD}.
     *
     * <p>This default serves providers without the extension.
     *
     * @throws DatException MODEL_NOT_SUPPORTED where the provider does not offer it; otherwise as
     *         {@link #postSend(List, long, Set)}, and INVALID_PARAMETER for a local triplet that is not
     *         8 bytes or a remote one that is not 8 bytes at an 8-byte aligned offset
     * @since 1.4
     */
    default void postFetchAndAdd(long addValue, LmrTriplet local, long cookie, RmrTriplet remote,
                                 Set<CompletionFlag> flags) {
        throw notOffered("dat_ib_post_fetch_and_add");
    }

    /**
     * {@code dat_ib_post_cmp_and_swap}: atomically compares the 64-bit value at {@code remote} of the
     * peer with {@code compareValue} and, if they are equal, stores {@code swapValue} there; in either
     * case the value it held before lands in {@code local}. Otherwise as {@link #postFetchAndAdd}
     * ({@link ExtensionType#CMP_AND_SWAP}, {@link ProviderAttributes#DAT_IB_CMP_AND_SWAP}).
     *
     * @throws DatException as {@link #postFetchAndAdd}
     * @since 1.4
     */
    default void postCompareAndSwap(long compareValue, long swapValue, LmrTriplet local, long cookie,
                                    RmrTriplet remote, Set<CompletionFlag> flags) {
        throw notOffered("dat_ib_post_cmp_and_swap");
    }

    /**
     * {@code dat_ib_post_rdma_write_immed}: writes {@code iov} into {@code remote} of the peer as
     * {@link #postRdmaWrite(List, long, RmrTriplet, Set)} does, then hands {@code immediateData} to the
     * peer: the write consumes one receive posted at the data sink, which completes (after the data
     * is visible) as an {@link DatEvent.ExtendedDtoCompletion} of
     * {@link ExtensionType#RDMA_WRITE_IMMED_DATA} carrying the immediate data and the write's length,
     * in order with the sends of this endpoint. The request completes as
     * {@link ExtensionType#RDMA_WRITE_IMMED}. With no receive posted at the sink the write fails as a
     * send does ({@link DtoStatus#RECEIVER_NOT_READY} or the connection breaks, as the transport
     * does). Offered where {@link ProviderAttributes#offers} {@link ProviderAttributes#DAT_IB_IMMED_DATA}.
     *
     * <p>This default serves providers without the extension.
     *
     * @throws DatException MODEL_NOT_SUPPORTED where the provider does not offer it; otherwise as
     *         {@link #postRdmaWrite(List, long, RmrTriplet, Set)}
     * @since 1.4
     */
    default void postRdmaWriteWithImmediate(List<LmrTriplet> iov, long cookie, RmrTriplet remote, int immediateData,
                                            Set<CompletionFlag> flags) {
        throw notOffered("dat_ib_post_rdma_write_immed");
    }

    /**
     * {@code dat_ib_post_rdma_write_immed} with a pre-built, reusable {@link LocalIov}. This default
     * posts {@link LocalIov#triplets()}; a provider overrides it to post without allocating.
     *
     * @throws DatException as {@link #postRdmaWriteWithImmediate(List, long, RmrTriplet, int, Set)};
     *         INVALID_PARAMETER for a null vector
     * @since 1.4
     */
    default void postRdmaWriteWithImmediate(LocalIov iov, long cookie, RmrTriplet remote, int immediateData,
                                            Set<CompletionFlag> flags) {
        postRdmaWriteWithImmediate(triplets(iov), cookie, remote, immediateData, flags);
    }

    /**
     * {@code dat_query_counters} with DCNT_EP_ALL_COUNTERS: this endpoint's counters, then zeroed if
     * {@code reset}. Offered where {@link ProviderAttributes#offers}
     * {@link ProviderAttributes#DAT_COUNTERS}.
     *
     * @throws DatException INVALID_HANDLE; MODEL_NOT_SUPPORTED where the provider does not count
     * @since 1.4
     */
    default Counters<EpCounter> queryCounters(boolean reset) {
        throw notOffered("dat_query_counters");
    }

    /** MODEL_NOT_SUPPORTED for an extension the provider does not offer. */
    private static DatException notOffered(String operation) {
        return new DatException(DatReturnType.MODEL_NOT_SUPPORTED,
                operation + ": not offered by this provider");
    }

    /**
     * The triplets of {@code iov} (the local iov, argument 3 of the dat_ep_post_* functions).
     *
     * @throws DatException INVALID_PARAMETER for a null vector
     */
    private static List<LmrTriplet> triplets(LocalIov iov) {
        if (iov == null) {
            throw DatException.invalidParameter(3, "no local I/O vector");
        }
        return iov.triplets();
    }

    /**
     * {@code dat_ep_get_status}.
     *
     * @throws DatException INVALID_HANDLE
     */
    EpStatus status();

    /**
     * {@code dat_ep_free}: destroys the EP. During connection setup it aborts the establishment; a
     * connection is torn down. Afterwards no event of the EP is added to any EVD.
     *
     * @throws DatException INVALID_HANDLE (also for a second free); INVALID_STATE in RESERVED,
     *         PASSIVE_CONNECTION_PENDING or TENTATIVE_CONNECTION_PENDING
     */
    void free();

    /**
     * {@code dat_ep_reset}: moves a DISCONNECTED EP back to UNCONNECTED, flushing its posted receives.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE if the EP is not DISCONNECTED
     */
    void reset();

    /**
     * {@code dat_ep_recv_query}: how receive buffers are used by an EP on an SRQ.
     *
     * @throws DatException INVALID_HANDLE; MODEL_NOT_SUPPORTED where the provider cannot tell
     */
    RecvQuery recvQuery();

    /**
     * {@code dat_ep_set_watermark}: the soft and hard high watermarks for an EP on an SRQ. The soft one
     * is armed: the first time the receive buffers the EP took exceed it (during this call, or when
     * the EP takes one), an {@link EventNumber#ASYNC_SRQ_SOFT_HIGH_WATERMARK} event
     * ({@link DatEvent.AsyncError} naming this EP, reason {@link Dat#SRQ_SOFT_HIGH_WATERMARK_EVENT})
     * arrives on the IA's asynchronous EVD, once per setting; {@link Dat#WATERMARK_INFINITE} is none.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER; MODEL_NOT_SUPPORTED if the provider
     *         cannot raise the event
     */
    void setWatermark(int softHighWatermark, int hardHighWatermark);

    /**
     * What {@code dat_ep_get_status} returns.
     *
     * @param state the EP state
     * @param recvIdle whether no receive is outstanding
     * @param requestIdle whether no request is outstanding
     */
    record EpStatus(EpState state, boolean recvIdle, boolean requestIdle) {
    }

    /**
     * What {@code dat_ep_recv_query} returns.
     *
     * @param buffersAllocated receive buffers consumed by incoming messages of this EP
     * @param allocationSpan bytes of those buffers
     */
    record RecvQuery(int buffersAllocated, int allocationSpan) {
    }

    /**
     * DAT_EP_PARAM.
     *
     * @param ia the IA
     * @param state the EP state
     * @param localAddress the local IA address
     * @param localPortQual the local port qualifier (0 until connect binds one)
     * @param remoteAddress the remote IA address, or null
     * @param remotePortQual the remote port or connection qualifier, or 0
     * @param pz the PZ
     * @param recvEvd the receive EVD, or null
     * @param requestEvd the request EVD, or null
     * @param connectEvd the connect EVD, or null
     * @param srq the SRQ, or null
     * @param attributes the EP attributes
     */
    record EpParam(InterfaceAdapter ia, EpState state, SocketAddress localAddress, long localPortQual,
                   SocketAddress remoteAddress, long remotePortQual, ProtectionZone pz, EventDispatcher recvEvd,
                   EventDispatcher requestEvd, EventDispatcher connectEvd, SharedReceiveQueue srq,
                   EpAttributes attributes) {
    }
}
