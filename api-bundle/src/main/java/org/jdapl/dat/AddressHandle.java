package org.jdapl.dat;

import java.net.SocketAddress;
import org.osgi.annotation.versioning.ProviderType;

/**
 * DAT_IB_ADDR_HANDLE: where a {@link DatagramEndpoint} sends a datagram. The provider hands one out
 * in a {@link DatEvent.UdConnection} (the remote endpoint of a UD exchange) and in every
 * {@link ExtensionType#UD_RECV} completion (the datagram's sender); the consumer cannot make one.
 * A handle stays valid while the datagram endpoint it came from is not freed.
 *
 * @since 1.4
 */
@ProviderType
public interface AddressHandle {
    /** The IA address of the remote endpoint ({@code ia_addr}). */
    SocketAddress address();

    /** The remote endpoint's queue pair number on its IA ({@code qpn}). */
    int qpn();
}
