package org.jdapl.provider.emu;

/**
 * The active side of a connection request as the passive IA answers it ({@link EmuCr}): on the
 * loopback fabric a request that answers the active EP's {@link ConnectAttempt} directly, on the tcp fabric the
 * {@link Link} the request arrived on. Every method runs under the passive IA's domain lock.
 */
public interface Inbound {
    /** The request reached a listener: the attempt can now time out rather than be unreachable. */
    void delivered();

    /**
     * {@code dat_cr_accept} by {@code passive} (in COMPLETION_PENDING). The connection is established
     * at once (loopback) or when the active side confirms it (tcp).
     *
     * @return false if the active side no longer waits: the passive EP reports ACCEPT_COMPLETION_ERROR
     *         and no half-open connection exists (CONN_03)
     */
    boolean accept(EmuEp passive, byte[] privateData);

    /** {@code dat_cr_reject}: the active side gets CONNECTION_EVENT_PEER_REJECTED with the data (CONN_04, CONN_13). */
    void reject(byte[] privateData);

    /** The provider refuses the request: the active side gets NON_PEER_REJECTED (CONN_05). */
    void refuse(String reason);
}
