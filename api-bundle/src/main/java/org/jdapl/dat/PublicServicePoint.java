package org.jdapl.dat;

import org.osgi.annotation.versioning.ProviderType;

/** DAT_PSP_HANDLE: a Public Service Point listening on a connection qualifier for many requests. */
@ProviderType
public interface PublicServicePoint extends ServicePoint {
    /**
     * {@code dat_psp_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_PSP)
     */
    PspParam query();

    /**
     * {@code dat_psp_free}: stops new requests; requests already delivered stay valid.
     *
     * @throws DatException INVALID_HANDLE
     */
    @Override
    void free();

    /**
     * DAT_PSP_PARAM.
     *
     * @param ia the IA
     * @param connQual the connection qualifier it listens on
     * @param evd the EVD connection requests go to
     * @param flag who creates the endpoint
     */
    record PspParam(InterfaceAdapter ia, long connQual, EventDispatcher evd, PspFlag flag) {
    }
}
