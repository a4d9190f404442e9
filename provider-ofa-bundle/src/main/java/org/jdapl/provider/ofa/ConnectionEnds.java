package org.jdapl.provider.ofa;

import java.net.InetSocketAddress;

/**
 * The ends of an EP's connection as {@code dat_ep_query} reports them: the local port qualifier, the
 * peer's address and its port qualifier; {@link #NONE} before the first connection and after a reset.
 */
record ConnectionEnds(long localPort, InetSocketAddress remoteAddress, long remotePort) {
    static final ConnectionEnds NONE = new ConnectionEnds(0, null, 0);
}
