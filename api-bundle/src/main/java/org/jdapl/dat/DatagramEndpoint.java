package org.jdapl.dat;

import java.util.List;
import java.util.Set;
import org.osgi.annotation.versioning.ProviderType;

/**
 * An endpoint of DAT_IB_SERVICE_TYPE_UD, unreliable datagrams ({@link InterfaceAdapter#createDatagramEp}).
 *
 * <p>It has no connection: {@link #connect} and a {@link ConnectionRequest#accept} with it only
 * exchange address handles. The active side gets {@link EventNumber#IB_UD_CONNECTION_ESTABLISHED}
 * ({@link ExtensionType#UD_REMOTE_AH}) or {@link EventNumber#IB_UD_CONNECTION_REJECT} /
 * {@link EventNumber#IB_UD_CONNECTION_ERROR} on its connect EVD; the service point's EVD gets
 * {@link EventNumber#IB_UD_CONNECTION_REQUEST}, and accepting it gives the passive side
 * {@link EventNumber#IB_UD_CONNECTION_ESTABLISHED} ({@link ExtensionType#UD_PASSIVE_REMOTE_AH}). The
 * endpoint may connect and accept again and again (one handle per peer); it is UNCONNECTED until
 * its first exchange completes and CONNECTED after, and posts are allowed in both states.
 *
 * <p>Datagrams keep their boundaries: each fills one posted receive, whose completion
 * ({@link ExtensionType#UD_RECV}) carries the payload's length (no transport header lands in the
 * buffer) and the sender's {@link AddressHandle}. The loss rules are those of a datagram: one that
 * arrives while no receive is posted is dropped and nobody is told; one longer than the receive's
 * buffer completes that receive with {@link DtoStatus#LOCAL_LENGTH}; the sender's
 * {@link ExtensionType#UD_SEND} completion says only that the datagram left.
 *
 * @since 1.4
 */
@ProviderType
public interface DatagramEndpoint extends Endpoint {
    /**
     * {@code dat_ib_post_send_ud}: sends {@code iov} as one datagram to {@code ah}. It completes on
     * the request EVD as an {@link DatEvent.ExtendedDtoCompletion} of {@link ExtensionType#UD_SEND}.
     *
     * @throws DatException INVALID_HANDLE (also for an address handle another endpoint handed out
     *         or one of a freed endpoint); INVALID_PARAMETER for a null handle, too many segments or a
     *         datagram over {@link #maxDatagramSize()}; PROTECTION_VIOLATION; PRIVILEGES_VIOLATION;
     *         INSUFFICIENT_RESOURCES when the request queue is full
     */
    void postSendDatagram(AddressHandle ah, List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags);

    /**
     * {@code dat_ib_post_send_ud} with a pre-built, reusable {@link LocalIov}. This default posts
     * {@link LocalIov#triplets()}; a provider overrides it to post without allocating.
     *
     * @throws DatException as {@link #postSendDatagram(AddressHandle, List, long, Set)};
     *         INVALID_PARAMETER for a null vector
     */
    default void postSendDatagram(AddressHandle ah, LocalIov iov, long cookie, Set<CompletionFlag> flags) {
        if (iov == null) {
            throw DatException.invalidParameter(3, "no local I/O vector");
        }
        postSendDatagram(ah, iov.triplets(), cookie, flags);
    }

    /** The largest payload of one datagram (the path MTU on InfiniBand). */
    int maxDatagramSize();
}
