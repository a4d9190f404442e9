package org.jdapl.dat;

import java.net.SocketAddress;
import org.osgi.annotation.versioning.ProviderType;

/** DAT_CR_HANDLE: a connection request that arrived at a service point, to accept or reject once. */
@ProviderType
public interface ConnectionRequest extends DatHandle {
    /**
     * {@code dat_cr_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_CR) once accepted or rejected
     */
    CrParam query();

    /**
     * {@code dat_cr_accept}: accepts with {@code ep} (or the provider's EP for a PROVIDER PSP or an
     * RSP, when {@code ep} is null), passing {@code privateData} to the active side. The EP goes to
     * COMPLETION_PENDING, then CONNECTED with ESTABLISHED on its connect EVD; if the active side has
     * gone, ACCEPT_COMPLETION_ERROR arrives instead. The CR handle is consumed. A request that came as
     * {@link EventNumber#IB_UD_CONNECTION_REQUEST} is accepted with a {@link DatagramEndpoint}, which
     * then gets {@link EventNumber#IB_UD_CONNECTION_ESTABLISHED} with the active side's address handle.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE if the EP is not UNCONNECTED (or the
     *         reserved/tentative EP of this request); INVALID_PARAMETER for private data over the maximum
     */
    void accept(Endpoint ep, byte[] privateData);

    /**
     * {@code dat_cr_reject}: the active side gets PEER_REJECTED with {@code privateData}. A reserved
     * EP returns to UNCONNECTED; a provider-created EP is destroyed. The CR handle is consumed.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER for private data over the maximum
     */
    void reject(byte[] privateData);

    /**
     * {@code dat_cr_handoff}: hands the request to the service point on another connection qualifier
     * of the same IA, which receives it as a new CONNECTION_REQUEST event. The CR handle is consumed.
     *
     * @throws DatException INVALID_HANDLE; INVALID_PARAMETER if nothing listens on {@code connQual}
     */
    void handoff(long connQual);

    /**
     * DAT_CR_PARAM.
     *
     * @param remoteAddress the active side's IA address
     * @param remotePortQual the active side's port qualifier
     * @param privateData the active side's private data (a copy)
     * @param localEp the EP the service point provides (reserved or provider-created), or null
     */
    record CrParam(SocketAddress remoteAddress, long remotePortQual, byte[] privateData, Endpoint localEp) {
        /** Defaults null private data to empty. */
        public CrParam {
            privateData = privateData == null ? new byte[0] : privateData;
        }
    }
}
