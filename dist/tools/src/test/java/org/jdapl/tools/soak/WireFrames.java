package org.jdapl.tools.soak;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * An encoder and decoder of the emulated provider's tcp wire (provider-emu-bundle/PROTOCOL.md),
 * written from the document and kept apart from the provider's own, so that a hostile peer can say
 * on the wire what the provider would never say itself.
 */
final class WireFrames {
    static final int HEADER = 40;
    static final int VERSION = 1;
    static final long MAGIC = 0x4A4441504C454D55L;
    static final int CONNECT_REQ = 1;
    static final int CONNECT_DELIVERED = 2;
    static final int CONNECT_ACCEPT = 3;
    static final int CONNECT_REJECT = 4;
    static final int CONNECT_RTU = 5;
    static final int SEND = 6;
    static final int RDMA_WRITE = 7;
    static final int RDMA_READ_REQ = 8;
    static final int RDMA_READ_RESP = 9;
    static final int ACK = 10;
    static final int NAK = 11;
    static final int RECV_POSTED = 12;
    static final int DISCONNECT = 13;
    static final int ABORT = 14;
    static final int KEEPALIVE = 15;

    private WireFrames() {
    }

    /** A decoded header. */
    record Header(int type, int flags, int status, long length, long seq, long a, long b, long c) {
    }

    /** One frame: the header fields and {@code payloadLength} bytes of {@code fill}. */
    static byte[] frame(int type, int flags, int status, long length, long seq, long a, long b, long c,
                        byte[] payload) {
        ByteBuffer bb = ByteBuffer.allocate(HEADER + (payload == null ? 0 : payload.length));
        bb.put((byte) type).put((byte) flags).putShort((short) status).putInt((int) length)
                .putLong(seq).putLong(a).putLong(b).putLong(c);
        if (payload != null) {
            bb.put(payload);
        }
        return bb.array();
    }

    /** A frame whose length field is its payload's length. */
    static byte[] frame(int type, int status, long seq, long a, long b, long c, byte[] payload) {
        return frame(type, 0, status, payload == null ? 0 : payload.length, seq, a, b, c, payload);
    }

    /** The connect request of an active IA listening on {@code port}, for {@code qual}. */
    static byte[] connectRequest(long qual, long portQual, int port) {
        byte[] payload = {(byte) (port >>> 8), (byte) port};
        return frame(CONNECT_REQ, VERSION, 0, qual, portQual, MAGIC, payload);
    }

    /** Reads one frame; its payload into {@code payload} if given (up to its size), the rest skipped. */
    static Header read(DataInputStream in, byte[] payload) throws IOException {
        byte[] h = new byte[HEADER];
        in.readFully(h);
        ByteBuffer bb = ByteBuffer.wrap(h);
        Header header = new Header(bb.get() & 0xff, bb.get() & 0xff, bb.getShort() & 0xffff,
                bb.getInt() & 0xffffffffL, bb.getLong(), bb.getLong(), bb.getLong(), bb.getLong());
        long left = header.length();
        int at = 0;
        while (left > 0) {
            if (payload != null && at < payload.length) {
                int n = (int) Math.min(left, payload.length - at);
                in.readFully(payload, at, n);
                at += n;
                left -= n;
            } else {
                long skipped = in.skip(left);
                if (skipped <= 0) {
                    if (in.read() < 0) {
                        throw new IOException("end of stream in a payload");
                    }
                    skipped = 1;
                }
                left -= skipped;
            }
        }
        return header;
    }

    static DataInputStream input(InputStream in) {
        return new DataInputStream(new java.io.BufferedInputStream(in, 1 << 16));
    }
}
