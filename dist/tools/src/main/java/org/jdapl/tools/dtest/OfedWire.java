package org.jdapl.tools.dtest;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.ToolException;

/**
 * What OFED's {@code dtest} (uDAPL's {@code test/dtest/dtest.c}, Debian's dapl2-utils) says on the
 * wire, so that jdapl's dtest ({@code -O}) and OFED's interoperate either way round:
 * <ul>
 * <li>before anything else the client fetches the server's parameters over TCP port
 * {@value #CONN_PORT}: 128 bytes, {@code "%04hx:%08x:%08x:%08x:%s"} (LID, QPN, scope id, the IPv4
 * {@code s_addr} as the server's memory holds it, the server's provider name);</li>
 * <li>connect private data: 48 bytes 1, 2, ..., 48; the server checks them, adds one to each and
 * accepts with them; the client checks 2, 3, ..., 49;</li>
 * <li>messages: a 16-byte {@code DAT_RMR_TRIPLET} (virtual address, 64 bits; segment length, 32;
 * RMR context, 32), all in network order, naming the sender's receive buffer; sent once after
 * the connection, once after each side's RDMA Writes and once after its RDMA Reads;</li>
 * <li>the ping-pong: buffer-length messages, the client's first byte 0x55, the server's 0xaa.</li>
 * </ul>
 */
final class OfedWire {
    /** OFED dtest's TCP port for the server's parameters ({@code CONN_PORT}). */
    static final int CONN_PORT = 15828;
    /** The length of the parameter message ({@code CONN_MSG_SIZE}). */
    static final int CONN_MSG_SIZE = 128;
    /** The connect and accept private data length. */
    static final int PDATA = 48;
    /** {@code sizeof(DAT_RMR_TRIPLET)}. */
    static final int TRIPLET = 16;
    /** Receive buffers for triplets ({@code MSG_BUF_COUNT}). */
    static final int MSG_BUF_COUNT = 3;
    /** RDMA Reads each side does ({@code MAX_RDMA_RD}). */
    static final int MAX_RDMA_RD = 4;
    /** Ping-pong messages ({@code msg_burst}). */
    static final int MSG_BURST = 100;
    /** OFED dtest's default buffer length ({@code RDMA_BUFFER_SIZE}). */
    static final int DEFAULT_BUF_LEN = 4 * 1024 * 1024;
    /** OFED dtest's default RDMA Write burst. */
    static final int DEFAULT_BURST = 1000;
    /** OFED dtest's default signal rate ({@code -S}). */
    static final int DEFAULT_SIGNAL_RATE = 10;
    /** First byte of the client's pings and of the server's pongs. */
    static final byte PING = 0x55;
    static final byte PONG = (byte) 0xaa;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private OfedWire() {
    }

    /** The client's connect private data: 1, 2, ..., 48. */
    static byte[] connectData() {
        byte[] d = new byte[PDATA];
        for (int i = 0; i < PDATA; i++) {
            d[i] = (byte) (i + 1);
        }
        return d;
    }

    /**
     * Checks that the first 48 bytes of {@code data} are {@code i + first} (a receiver may get
     * more: rdma_cm's whole buffer).
     *
     * @throws ToolException FAILURE naming the first wrong byte
     */
    static void checkPattern(byte[] data, int first, String what) {
        if (data.length < PDATA) {
            throw ToolException.failure(what + ": " + data.length + " bytes of private data, expected at least " + PDATA);
        }
        for (int i = 0; i < PDATA; i++) {
            if ((data[i] & 0xff) != i + first) {
                throw ToolException.failure(what + ": private data byte " + i + " is " + (data[i] & 0xff)
                        + ", expected " + (i + first));
            }
        }
    }

    /** The server's answer: the request's first 48 bytes, each plus one. */
    static byte[] acceptData(byte[] request) {
        byte[] d = Arrays.copyOf(request, PDATA);
        for (int i = 0; i < PDATA; i++) {
            d[i]++;
        }
        return d;
    }

    static void writeTriplet(MemorySegment slot, long address, int length, int rmrContext) {
        slot.set(LONG, 0, address);
        slot.set(INT, 8, length);
        slot.set(INT, 12, rmrContext);
    }

    static RmrTriplet readTriplet(MemorySegment slot) {
        return new RmrTriplet(slot.get(INT, 12), slot.get(LONG, 0), slot.get(INT, 8) & 0xFFFF_FFFFL);
    }

    /** The server's parameters as the client reads them. */
    record ServerParams(InetAddress address, String provider) {
    }

    /** The parameter message of a server at {@code address} (IPv4) whose IA is {@code provider}. */
    static byte[] paramsMessage(InetAddress address, String provider) {
        int sAddr = 0;
        if (address instanceof Inet4Address v4) {
            byte[] b = v4.getAddress();
            // s_addr is in network order in memory; dtest prints it as the host's (little-endian) integer.
            sAddr = (b[0] & 0xff) | (b[1] & 0xff) << 8 | (b[2] & 0xff) << 16 | (b[3] & 0xff) << 24;
        }
        String text = String.format("%04x:%08x:%08x:%08x:%s", 0, 0, 0, sAddr, provider);
        byte[] msg = new byte[CONN_MSG_SIZE];
        byte[] t = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, msg, 0, Math.min(t.length, CONN_MSG_SIZE - 1));
        return msg;
    }

    /**
     * Parses a parameter message.
     *
     * @throws ToolException FAILURE for a message that is not OFED dtest's or has no IPv4 address
     */
    static ServerParams parseParams(byte[] msg) {
        int end = 0;
        while (end < msg.length && msg[end] != 0) {
            end++;
        }
        String[] f = new String(msg, 0, end, StandardCharsets.US_ASCII).split(":", 5);
        if (f.length != 5) {
            throw ToolException.failure("the server's parameters are not OFED dtest's: '"
                    + new String(msg, 0, end, StandardCharsets.US_ASCII) + "'");
        }
        int sAddr = (int) Long.parseLong(f[3], 16);
        if (sAddr == 0) {
            throw ToolException.failure("the server sent no IPv4 address (an ucm provider's LID and QPN: not supported)");
        }
        byte[] b = {(byte) sAddr, (byte) (sAddr >>> 8), (byte) (sAddr >>> 16), (byte) (sAddr >>> 24)};
        try {
            return new ServerParams(InetAddress.getByAddress(b), f[4]);
        } catch (IOException e) {
            throw new ToolException(ToolException.FAILURE, "bad address in the server's parameters", e);
        }
    }

    /**
     * Server side: waits at most {@code timeoutMillis} for one client on TCP port {@value #CONN_PORT}
     * and sends it the parameters.
     *
     * @throws ToolException FAILURE if no client came or the port is taken
     */
    static void offerParams(byte[] message, int port, long timeoutMillis) {
        offerParams(message, port, timeoutMillis, false);
    }

    /**
     * Server side of OFED dtestx's exchange ({@code send_server_params}): {@link #offerParams}, then
     * the client's own parameter message back, which dtestx's client always sends.
     *
     * @throws ToolException FAILURE if no client came, the port is taken or the client sent no reply
     */
    static ServerParams offerParamsAndReadReply(byte[] message, int port, long timeoutMillis) {
        return offerParams(message, port, timeoutMillis, true);
    }

    private static ServerParams offerParams(byte[] message, int port, long timeoutMillis, boolean readReply) {
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(port), 1);
            listener.setSoTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, timeoutMillis)));
            try (Socket s = listener.accept(); OutputStream out = s.getOutputStream()) {
                out.write(message);
                out.flush();
                if (!readReply) {
                    return null;
                }
                s.setSoTimeout(10_000);
                byte[] reply = s.getInputStream().readNBytes(CONN_MSG_SIZE);
                if (reply.length != CONN_MSG_SIZE) {
                    throw ToolException.failure("the client's parameters were " + reply.length + " bytes, expected "
                            + CONN_MSG_SIZE);
                }
                return parseParams(reply);
            }
        } catch (SocketTimeoutException e) {
            throw ToolException.failure("no client asked for the server's parameters on TCP port " + port
                    + " within " + timeoutMillis / 1000 + " s");
        } catch (IOException e) {
            throw new ToolException(ToolException.FAILURE, "TCP port " + port + " for the server's parameters: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Client side: reads the server's parameters from {@code host}'s TCP port, retrying while the
     * server is not up yet, for at most {@code timeoutMillis}.
     *
     * @throws ToolException FAILURE if the server never answered
     */
    static ServerParams fetchParams(String host, int port, long timeoutMillis) {
        return fetchParams(host, port, timeoutMillis, null);
    }

    /**
     * Client side: as {@link #fetchParams(String, int, long)}, then, if {@code reply} is not null, sends
     * it back (OFED dtestx's {@code get_server_params}: the client's own parameter message, which
     * dtestx's server reads before it listens for the connection).
     */
    static ServerParams fetchParams(String host, int port, long timeoutMillis, byte[] reply) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        IOException last = null;
        do {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 5_000);
                s.setSoTimeout(10_000);
                InputStream in = s.getInputStream();
                byte[] msg = in.readNBytes(CONN_MSG_SIZE);
                if (msg.length != CONN_MSG_SIZE) {
                    throw ToolException.failure("the server's parameters were " + msg.length + " bytes, expected "
                            + CONN_MSG_SIZE);
                }
                ServerParams params = parseParams(msg);
                if (reply != null) {
                    OutputStream out = s.getOutputStream();
                    out.write(reply);
                    out.flush();
                }
                return params;
            } catch (IOException e) {
                last = e;
                try {
                    Thread.sleep(200);
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                    throw ToolException.failure("interrupted");
                }
            }
        } while (System.nanoTime() < deadline);
        throw ToolException.failure("could not fetch the server's parameters from " + host + ":" + port + ": "
                + last.getMessage());
    }
}
