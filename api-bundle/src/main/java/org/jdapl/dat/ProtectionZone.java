package org.jdapl.dat;

import org.osgi.annotation.versioning.ProviderType;

/** DAT_PZ_HANDLE: a Protection Zone; EPs, LMRs, RMRs and SRQs of one PZ may work together. */
@ProviderType
public interface ProtectionZone extends DatHandle {
    /**
     * {@code dat_pz_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_PZ)
     */
    PzParam query();

    /**
     * {@code dat_pz_free}.
     *
     * @throws DatException INVALID_HANDLE; INVALID_STATE (INVALID_STATE_PZ_IN_USE) while an EP, LMR,
     *         RMR or SRQ uses the PZ
     */
    void free();

    /**
     * {@code dat_rmr_create}: an RMR of PZ scope.
     *
     * @throws DatException INVALID_HANDLE; INSUFFICIENT_RESOURCES (RESOURCE_MEMORY_REGION);
     *         MODEL_NOT_SUPPORTED where the provider has no memory windows
     */
    RemoteMemoryRegion createRmr();

    /**
     * {@code dat_rmr_create_for_ep}: an RMR of EP scope, bound to at most one EP at a time.
     *
     * @throws DatException as {@link #createRmr}
     */
    RemoteMemoryRegion createRmrForEp();

    /**
     * DAT_PZ_PARAM.
     *
     * @param ia the IA the PZ belongs to
     */
    record PzParam(InterfaceAdapter ia) {
    }
}
