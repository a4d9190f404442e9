package org.jdapl.dat;

import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_RSP_HANDLE: a Reserved Service Point: one connection request for one reserved endpoint.
 * The RSP is destroyed by the arrival of its request.
 */
@ProviderType
public interface ReservedServicePoint extends ServicePoint {
    /**
     * {@code dat_rsp_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_RSP)
     */
    RspParam query();

    /**
     * {@code dat_rsp_free}: the reserved EP returns to UNCONNECTED.
     *
     * @throws DatException INVALID_HANDLE
     */
    @Override
    void free();

    /**
     * DAT_RSP_PARAM.
     *
     * @param ia the IA
     * @param connQual the connection qualifier
     * @param evd the EVD the request goes to
     * @param ep the reserved endpoint
     */
    record RspParam(InterfaceAdapter ia, long connQual, EventDispatcher evd, Endpoint ep) {
    }
}
