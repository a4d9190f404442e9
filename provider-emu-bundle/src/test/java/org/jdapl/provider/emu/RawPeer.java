package org.jdapl.provider.emu;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.jdapl.provider.emu.tcp.Frame;
import org.jdapl.provider.emu.tcp.FrameType;

/** A hand-driven peer on a plain socket that speaks (or breaks) the tcp fabric's wire protocol. */
final class RawPeer implements AutoCloseable {
    private final Socket socket;
    private final DataOutputStream out;
    private final DataInputStream in;
    byte[] lastPayload = new byte[0];

    RawPeer(SocketAddress to) throws IOException {
        this(connected(to));
    }

    /** A peer on a socket already connected (accepted from an IA that connects to it, say). */
    RawPeer(Socket connected) throws IOException {
        socket = connected;
        socket.setSoTimeout(8000);
        socket.setTcpNoDelay(true);
        out = new DataOutputStream(socket.getOutputStream());
        in = new DataInputStream(socket.getInputStream());
    }

    private static Socket connected(SocketAddress to) throws IOException {
        Socket s = new Socket();
        s.connect(to, 2000);
        return s;
    }

    void raw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    void frame(int type, int flags, int status, long length, long seq, long a, long b, long c, byte[] payload)
            throws IOException {
        ByteBuffer h = ByteBuffer.allocate(Frame.HEADER_SIZE);
        Frame.encode(h, type, flags, status, length, seq, a, b, c);
        out.write(h.array());
        if (payload != null) {
            out.write(payload);
        }
        out.flush();
    }

    void frame(FrameType type, int flags, int status, long length, long seq, long a, long b, long c, byte[] payload)
            throws IOException {
        frame(type.code(), flags, status, length, seq, a, b, c, payload);
    }

    /** A connect request for {@code qual} with the given protocol version and private data. */
    void connectRequest(int version, long qual, byte[] privateData) throws IOException {
        byte[] p = new byte[2 + privateData.length];
        int port = socket.getLocalPort();
        p[0] = (byte) (port >>> 8);
        p[1] = (byte) port;
        System.arraycopy(privateData, 0, p, 2, privateData.length);
        frame(FrameType.CONNECT_REQ, 0, version, p.length, 0, qual, 0x8000_0000L, Frame.MAGIC, p);
    }

    /** The next frame other than a keepalive; its payload is in {@link #lastPayload}. */
    Frame next() throws IOException {
        while (true) {
            byte[] h = new byte[Frame.HEADER_SIZE];
            in.readFully(h);
            try {
                Frame header = Frame.decode(ByteBuffer.wrap(h));
                lastPayload = new byte[(int) header.length()];
                in.readFully(lastPayload);
                if (header.type() != FrameType.KEEPALIVE) {
                    return header;
                }
            } catch (Frame.ProtocolException e) {
                throw new IOException("the IA sent a bad frame: " + e.getMessage(), e);
            }
        }
    }

    /** Whether the IA closes the connection within {@code limit} (frames it sends meanwhile are skipped). */
    boolean closedWithin(Duration limit) throws IOException {
        long deadline = System.nanoTime() + limit.toNanos();
        InputStream raw = socket.getInputStream();
        byte[] sink = new byte[4096];
        while (System.nanoTime() < deadline) {
            socket.setSoTimeout((int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            try {
                if (raw.read(sink) < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (SocketException | EOFException e) {
                return true;
            }
        }
        return false;
    }

    InetSocketAddress local() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
