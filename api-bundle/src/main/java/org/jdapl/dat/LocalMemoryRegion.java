package org.jdapl.dat;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_LMR_HANDLE: a Local Memory Region, a registered {@link MemorySegment}. Its {@code lmr_context}
 * names it in local DTOs; its {@code rmr_context} lets peers RDMA into it when the privileges allow.
 */
@ProviderType
public interface LocalMemoryRegion extends DatHandle {
    /**
     * {@code dat_lmr_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_LMR)
     */
    LmrParam query();

    /**
     * {@code dat_lmr_free}: unregisters the region. The segment stays the consumer's and usable.
     * DTOs that name the region afterwards fail with a protection error; remote RDMA that names
     * its rmr_context fails REMOTE_ACCESS and breaks that connection.
     *
     * @throws DatException INVALID_HANDLE (also for a second free); INVALID_STATE
     *         (INVALID_STATE_LMR_IN_USE) while an RMR is bound to it
     */
    void free();

    /**
     * The registered segment. Usable also after {@link #free()}.
     */
    MemorySegment segment();

    /**
     * The DAT_LMR_CONTEXT.
     *
     * @throws DatException INVALID_HANDLE
     */
    default int lmrContext() {
        return query().lmrContext();
    }

    /**
     * The DAT_RMR_CONTEXT peers name in RDMA (0 if the region grants no remote access).
     *
     * @throws DatException INVALID_HANDLE
     */
    default int rmrContext() {
        return query().rmrContext();
    }

    /**
     * DAT_LMR_PARAM.
     *
     * @param ia the IA
     * @param pz the PZ
     * @param segment the registered segment
     * @param length the registered length requested
     * @param privileges the privileges granted
     * @param vaType how RMR target addresses are formed
     * @param lmrContext the lmr_context
     * @param rmrContext the rmr_context (0 without remote privileges)
     * @param registeredSize the size actually registered
     * @param registeredAddress the address of the first byte as peers name it (0 for zero-based)
     */
    record LmrParam(InterfaceAdapter ia, ProtectionZone pz, MemorySegment segment, long length,
                    Set<MemPriv> privileges, VaType vaType, int lmrContext, int rmrContext, long registeredSize,
                    long registeredAddress) {
        /** Copies the privileges. */
        public LmrParam {
            privileges = Set.copyOf(privileges);
        }
    }
}
