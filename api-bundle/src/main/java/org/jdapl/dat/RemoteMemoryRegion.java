package org.jdapl.dat;

import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_RMR_HANDLE: a Remote Memory Region (memory window): a part of an LMR exposed to one peer
 * through an {@code rmr_context} that a bind creates and an unbind (a bind of length 0) revokes.
 */
@ProviderType
public interface RemoteMemoryRegion extends DatHandle {
    /**
     * {@code dat_rmr_query}.
     *
     * @throws DatException INVALID_HANDLE (INVALID_HANDLE_RMR)
     */
    RmrParam query();

    /**
     * {@code dat_rmr_bind}: exposes {@code length} bytes at {@code offset} of {@code lmr} with
     * {@code privileges} to the peer of {@code ep}, through a new rmr_context which is returned. The
     * bind completes on the EP's request EVD as an RMR bind completion. A {@code length} of 0
     * unbinds (and {@code lmr} may then be null).
     *
     * @return the new rmr_context (0 after an unbind)
     * @throws DatException INVALID_HANDLE (RMR, LMR or EP); INVALID_STATE if the EP is not
     *         CONNECTED (or DISCONNECT_PENDING); INVALID_PARAMETER for bounds outside the LMR;
     *         PRIVILEGES_VIOLATION for privileges the LMR does not have; PROTECTION_VIOLATION for
     *         objects of different PZs
     */
    int bind(LocalMemoryRegion lmr, long offset, long length, Set<MemPriv> privileges, VaType vaType, Endpoint ep,
             long cookie, Set<CompletionFlag> flags);

    /** {@code dat_rmr_bind} with a zero-length triplet: revokes the current rmr_context. */
    default void unbind(Endpoint ep, long cookie, Set<CompletionFlag> flags) {
        bind(null, 0, 0, Dat.MEM_PRIV_NONE, VaType.VA, ep, cookie, flags);
    }

    /**
     * {@code dat_rmr_free}: revokes any binding and destroys the RMR.
     *
     * @throws DatException INVALID_HANDLE
     */
    void free();

    /**
     * DAT_RMR_PARAM.
     *
     * @param ia the IA
     * @param pz the PZ
     * @param lmr the LMR it is bound to, or null when unbound
     * @param offset the offset of the bound part in the LMR
     * @param length the bound length (0 when unbound)
     * @param privileges the granted privileges
     * @param rmrContext the current rmr_context, or 0
     * @param scope its scope
     * @param vaType how target addresses are formed
     */
    record RmrParam(InterfaceAdapter ia, ProtectionZone pz, LocalMemoryRegion lmr, long offset, long length,
                    Set<MemPriv> privileges, int rmrContext, RmrScope scope, VaType vaType) {
        /** Copies the privileges. */
        public RmrParam {
            privileges = Set.copyOf(privileges);
        }
    }
}
