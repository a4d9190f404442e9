package org.jdapl.dat;

import org.osgi.annotation.versioning.ProviderType;

/** A service point where connection requests arrive: a PSP, an RSP or a CSP. */
@ProviderType
public interface ServicePoint extends DatHandle {
    /**
     * Frees the service point ({@code dat_psp_free}, {@code dat_rsp_free}, {@code dat_csp_free}):
     * no new connection request arrives at it afterwards.
     *
     * @throws DatException INVALID_HANDLE
     */
    void free();
}
