package org.jdapl.dat;

import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_IA_HANDLE: an open Interface Adapter, the consumer's view of one provider's device or
 * fabric address. It is opened by name through {@link DatRegistry#open} ({@code dat_ia_open}) and
 * creates every other object. Closing it ({@code dat_ia_close}) with {@link CloseFlag#ABRUPT} frees
 * all objects it created; {@link #close()} does that, so an IA fits try-with-resources.
 */
@ProviderType
public interface InterfaceAdapter extends DatHandle, AutoCloseable {
    /** The IA name it was opened by (the first field of its dat.conf entry). */
    String name();

    /**
     * {@code dat_ia_query}: the asynchronous EVD, the IA attributes and the provider attributes.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_IA) if the IA is closed
     */
    IaQuery query();

    /**
     * {@code dat_ia_close}. ABRUPT frees every object of the IA (outstanding DTOs are flushed,
     * connections broken); GRACEFUL closes only an IA that has no live objects but its own
     * asynchronous EVD.
     *
     * @throws DatException INVALID_HANDLE if the IA is already closed; INVALID_STATE
     *         (INVALID_STATE_IA_IN_USE) for GRACEFUL with live objects; INVALID_PARAMETER for a null flag
     */
    void close(CloseFlag flag);

    /** {@code dat_ia_close} with DAT_CLOSE_ABRUPT_FLAG; a second close is ignored. */
    @Override
    void close();

    /**
     * {@code dat_pz_create}.
     *
     * @throws DatException INVALID_HANDLE; INSUFFICIENT_RESOURCES
     */
    ProtectionZone createPz();

    /**
     * {@code dat_evd_create}.
     *
     * @param minQlen the smallest number of events the EVD must hold, 1 or more
     * @param cno the CNO to notify, or null
     * @param flags the event streams it accepts (see {@link Dat#EVD_DEFAULT_FLAGS})
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER for a non-positive length, a length
     *         over the IA's maximum or an empty flag set; INSUFFICIENT_RESOURCES
     */
    EventDispatcher createEvd(int minQlen, Cno cno, Set<EvdFlag> flags);

    /**
     * {@code dat_cno_create}. The wait agent (DAT_OS_WAIT_PROXY_AGENT) is called with the EVD that
     * triggered the CNO, on a provider thread; it may be null.
     *
     * @throws DatException INVALID_HANDLE; INSUFFICIENT_RESOURCES
     */
    Cno createCno(Consumer<EventDispatcher> waitAgent);

    /**
     * {@code dat_ep_create}. The EVDs may be null (DAT_HANDLE_NULL) where the EP does not need them;
     * {@code attributes} may be null for the provider's defaults.
     *
     * @throws DatException INVALID_HANDLE (subtype PZ or EVD_*) for a freed or foreign object;
     *         INVALID_PARAMETER for attributes over the IA's limits; INSUFFICIENT_RESOURCES
     */
    Endpoint createEp(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                      EventDispatcher connectEvd, EpAttributes attributes);

    /**
     * {@code dat_ep_create_with_srq}: an EP whose receives come from a shared receive queue.
     *
     * @throws DatException as {@link #createEp}, and INVALID_HANDLE (INVALID_HANDLE_SRQ)
     */
    Endpoint createEpWithSrq(ProtectionZone pz, EventDispatcher recvEvd, EventDispatcher requestEvd,
                             EventDispatcher connectEvd, SharedReceiveQueue srq, EpAttributes attributes);

    /**
     * {@code dat_psp_create}: listens for connection requests on a connection qualifier.
     *
     * @throws DatException INVALID_HANDLE; CONN_QUAL_IN_USE; INVALID_PARAMETER for an EVD without
     *         the CR stream; INSUFFICIENT_RESOURCES
     */
    PublicServicePoint createPsp(long connQual, EventDispatcher crEvd, PspFlag flag);

    /**
     * {@code dat_psp_create_any}: listens on a connection qualifier the provider chooses; read it
     * with {@link PublicServicePoint#query()}.
     *
     * @throws DatException INVALID_HANDLE; CONN_QUAL_UNAVAILABLE; INSUFFICIENT_RESOURCES
     */
    PublicServicePoint createPspAny(EventDispatcher crEvd, PspFlag flag);

    /**
     * {@code dat_rsp_create}: reserves {@code ep} for the first connection request on a qualifier.
     * The EP moves to RESERVED.
     *
     * @throws DatException INVALID_HANDLE; CONN_QUAL_IN_USE; INVALID_STATE if the EP is not UNCONNECTED
     */
    ReservedServicePoint createRsp(long connQual, Endpoint ep, EventDispatcher crEvd);

    /**
     * {@code dat_csp_create}: a common service point listening on a full transport address
     * (address and port) instead of a connection qualifier; peers reach it with
     * {@link Endpoint#commonConnect}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_ADDRESS; PORT_IN_USE; COMM_NOT_SUPPORTED
     */
    CommonServicePoint createCsp(SocketAddress address, EventDispatcher crEvd);

    /**
     * {@code dat_lmr_create} for DAT_MEM_TYPE_VIRTUAL: registers a memory segment. The segment stays
     * the consumer's: freeing the LMR does not release it.
     *
     * @throws DatException INVALID_HANDLE; LENGTH_ERROR for an empty segment; INVALID_PARAMETER for
     *         a segment the provider cannot register (e.g. a heap segment for a hardware provider);
     *         INSUFFICIENT_RESOURCES (RESOURCE_MEMORY_REGION)
     */
    LocalMemoryRegion createLmr(ProtectionZone pz, MemorySegment region, Set<MemPriv> privileges, VaType vaType);

    /**
     * {@code dat_srq_create}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER; INSUFFICIENT_RESOURCES (RESOURCE_SRQ)
     */
    SharedReceiveQueue createSrq(ProtectionZone pz, SrqAttributes attributes);

    /**
     * {@code dat_lmr_sync_rdma_read}: makes local writes to the segments visible to remote RDMA
     * Reads on platforms with non-coherent memory.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER
     */
    void lmrSyncRdmaRead(List<LmrTriplet> segments);

    /**
     * {@code dat_lmr_sync_rdma_write}: makes remote RDMA Writes into the segments visible to local
     * reads on platforms with non-coherent memory.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER
     */
    void lmrSyncRdmaWrite(List<LmrTriplet> segments);

    /**
     * {@code dat_ep_create} with DAT_IB_SERVICE_TYPE_UD: an endpoint of unreliable datagrams
     * ({@link DatagramEndpoint}). Offered where {@link ProviderAttributes#offers}
     * {@link ProviderAttributes#DAT_IB_UD}; {@code attributes.maxMessageSize} is capped at the
     * provider's datagram size.
     *
     * <p>This default serves providers without the extension.
     *
     * @throws DatException MODEL_NOT_SUPPORTED where the provider does not offer it; otherwise as
     *         {@link #createEp}
     * @since 1.4
     */
    default DatagramEndpoint createDatagramEp(ProtectionZone pz, EventDispatcher recvEvd,
                                              EventDispatcher requestEvd, EventDispatcher connectEvd,
                                              EpAttributes attributes) {
        throw notOffered("dat_ep_create (DAT_IB_SERVICE_TYPE_UD)");
    }

    /**
     * {@code dat_query_counters} on the IA with DCNT_IA_ALL_COUNTERS: the IA's own counters, then
     * zeroed if {@code reset}. Offered where {@link ProviderAttributes#offers}
     * {@link ProviderAttributes#DAT_COUNTERS}.
     *
     * @throws DatException INVALID_HANDLE; MODEL_NOT_SUPPORTED where the provider does not count
     * @since 1.4
     */
    default Counters<IaCounter> queryCounters(boolean reset) {
        throw notOffered("dat_query_counters");
    }

    /**
     * The sums of the counters of every endpoint the IA has had since it opened (or since the last
     * reset): the live ones and the freed ones. {@code reset} zeroes them all, each endpoint's own too.
     *
     * @throws DatException as {@link #queryCounters(boolean)}
     * @since 1.4
     */
    default Counters<EpCounter> queryEpCounters(boolean reset) {
        throw notOffered("dat_query_counters");
    }

    /**
     * The sums of the counters of every EVD the IA has had since it opened (or since the last reset),
     * as {@link #queryEpCounters(boolean)} for endpoints.
     *
     * @throws DatException as {@link #queryCounters(boolean)}
     * @since 1.4
     */
    default Counters<EvdCounter> queryEvdCounters(boolean reset) {
        throw notOffered("dat_query_counters");
    }

    /** MODEL_NOT_SUPPORTED for an extension the provider does not offer. */
    private static DatException notOffered(String operation) {
        return new DatException(DatReturnType.MODEL_NOT_SUPPORTED, operation + ": not offered by this provider");
    }
}
