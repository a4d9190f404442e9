package org.jdapl.provider.ofi;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether the active side of a connection request on libfabric's tcp provider has given up before
 * the passive side accepts: its socket is closed, so the passive side's socket is in CLOSE_WAIT
 * (Linux's {@code /proc/self/net/tcp}, state 08). libfabric's tcp CM has no third message (rdma_cm's
 * RTU) and writes {@code FI_CONNECTED} as soon as the accept's response is in the socket, so the
 * passive side cannot learn it from libfabric; the kernel knows, since the active side's close sent a
 * FIN before the accept. The check is made before {@code fi_accept} sends the response (which the
 * closed peer answers with a reset, after which the socket is gone from the table). A connection is
 * matched by its local port and the peer's address and port; without the table, or without a match,
 * the peer counts as there. On the active side, a socket still in SYN_SENT when the connect times
 * out tells a silent host (UNREACHABLE) from a peer that did not answer the request (TIMED_OUT);
 * after a disconnect that cut transfers, the peer's FIN on a socket this side shut down says that the
 * peer's provider has read the whole stream.
 *
 * <p>Behaviours: CONN_06, CONN_07, DISC_12, DISC_15.
 */
final class TcpPeerCheck {
    private static final Path TABLE = Path.of("/proc/self/net/tcp");
    private static final String CLOSE_WAIT = "08";
    private static final String SYN_SENT = "02";
    private static final String ESTABLISHED = "01";
    private static final String FIN_WAIT1 = "04";
    private static final String FIN_WAIT2 = "05";

    private TcpPeerCheck() {
    }

    /** True if the socket from local port {@code localPort} to {@code peer} has received the peer's FIN. */
    static boolean peerClosed(long localPort, InetSocketAddress peer) {
        return CLOSE_WAIT.equals(state(localPort, peer));
    }

    /** True if the socket from local port {@code localPort} to {@code peer} still waits for the peer's SYN-ACK. */
    static boolean synSent(long localPort, InetSocketAddress peer) {
        return SYN_SENT.equals(state(localPort, peer));
    }

    /**
     * Waits (at most {@code boundNanos}) until the socket from {@code localPort} to {@code peer}, shut
     * down by this side, has the peer's FIN too (TIME_WAIT, CLOSING, or gone from the table): the
     * peer's provider has read the whole stream and stopped. True if it has.
     */
    static boolean awaitPeerShutdown(long localPort, InetSocketAddress peer, long boundNanos) {
        long deadline = System.nanoTime() + boundNanos;
        long pause = 100_000;
        while (true) {
            String s = state(localPort, peer);
            if (s == null || !(s.equals(ESTABLISHED) || s.equals(FIN_WAIT1) || s.equals(FIN_WAIT2))) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 10_000_000);
        }
    }

    /** The table's state of the socket from {@code localPort} to {@code peer} (hex, e.g. 01), or null. */
    private static String state(long localPort, InetSocketAddress peer) {
        if (localPort <= 0 || peer == null || peer.getPort() == 0 || !(peer.getAddress() instanceof Inet4Address a)) {
            return null;
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(TABLE);
        } catch (IOException | RuntimeException e) {
            return null;
        }
        String remote = hexAddress(a.getAddress()) + ":" + String.format("%04X", peer.getPort());
        String localSuffix = ":" + String.format("%04X", localPort);
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            if (f.length > 3 && f[1].endsWith(localSuffix) && f[2].equalsIgnoreCase(remote)) {
                return f[3];
            }
        }
        return null;
    }

    /** An IPv4 address as the table writes it: the 32-bit value in host (little-endian) order, in hex. */
    private static String hexAddress(byte[] b) {
        return String.format("%02X%02X%02X%02X", b[3], b[2], b[1], b[0]);
    }
}
