package org.jdapl.dat;

import java.net.SocketAddress;
import org.osgi.annotation.versioning.ProviderType;

/** DAT_CSP_HANDLE: a Common Service Point listening on a full transport address. */
@ProviderType
public interface CommonServicePoint extends ServicePoint {
    /**
     * {@code dat_csp_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_CSP)
     */
    CspParam query();

    /**
     * {@code dat_csp_free}.
     *
     * @throws DatException INVALID_HANDLE
     */
    @Override
    void free();

    /**
     * DAT_CSP_PARAM.
     *
     * @param ia the IA
     * @param address the transport address it listens on
     * @param evd the EVD connection requests go to
     */
    record CspParam(InterfaceAdapter ia, SocketAddress address, EventDispatcher evd) {
    }
}
