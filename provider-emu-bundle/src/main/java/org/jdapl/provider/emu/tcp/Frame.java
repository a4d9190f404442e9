package org.jdapl.provider.emu.tcp;

import java.nio.ByteBuffer;

import org.jdapl.provider.emu.EmuLimits;

/**
 * The frames of the emulated provider's TCP wire protocol (see PROTOCOL.md in the module): a fixed
 * header of {@link #HEADER_SIZE} bytes, big-endian, optionally followed by a payload whose length the
 * header gives. {@link #decode} checks every field before any of it is used.
 */
public final class Frame {
    /** The protocol version this provider speaks; a connect request of another version is refused. */
    public static final int VERSION = 1;
    /** "JDAPLEMU": the magic a connect request carries in field {@code c}. */
    public static final long MAGIC = 0x4A4441504C454D55L;
    /** Bytes of a header. */
    public static final int HEADER_SIZE = 40;
    /** The largest payload of a data frame (SEND, RDMA_WRITE, RDMA_READ_RESP) and the largest RDMA Read. */
    public static final long MAX_DATA = 1L << 31;
    /** The largest payload of a control frame (private data, a reason text). */
    public static final int MAX_CONTROL = 2 + EmuLimits.MAX_PRIVATE_DATA;

    public static final int CONNECT_REQ = 1;
    public static final int CONNECT_DELIVERED = 2;
    public static final int CONNECT_ACCEPT = 3;
    public static final int CONNECT_REJECT = 4;
    public static final int CONNECT_RTU = 5;
    public static final int SEND = 6;
    public static final int RDMA_WRITE = 7;
    public static final int RDMA_READ_REQ = 8;
    public static final int RDMA_READ_RESP = 9;
    public static final int ACK = 10;
    public static final int NAK = 11;
    public static final int RECV_POSTED = 12;
    public static final int DISCONNECT = 13;
    public static final int ABORT = 14;
    public static final int KEEPALIVE = 15;

    /** CONNECT_REQ flag: the request is for a common service point (qualifier = its port). */
    public static final int FLAG_COMMON = 0x01;
    /** SEND flag: invalidate the RMR context in field {@code a} at the receiver. */
    public static final int FLAG_INVALIDATE = 0x01;
    /** SEND flag: the sender asked for a solicited completion. */
    public static final int FLAG_SOLICITED = 0x02;

    /** CONNECT_REJECT status: the remote consumer rejected (payload: its private data). */
    public static final int REJECT_PEER = 1;
    /** CONNECT_REJECT status: no listener, full backlog, or version mismatch (payload: a reason text). */
    public static final int REJECT_NON_PEER = 2;

    /** NAK status: no receive was posted (the sender retries). */
    public static final int NAK_RNR = 1;
    /** NAK status: the rmr_context, bounds or privileges refused an RDMA. */
    public static final int NAK_REMOTE_ACCESS = 2;
    /** NAK status: the receive was too small or unusable. */
    public static final int NAK_REMOTE_RESPONDER = 3;

    /** ABORT status: an abrupt disconnect (the peer reports DISCONNECTED). */
    public static final int ABORT_DISCONNECT = 0;
    /** ABORT status: the connection broke (the peer reports BROKEN). */
    public static final int ABORT_BROKEN = 1;

    private Frame() {
    }

    /**
     * A decoded, checked header. A connection decodes every frame into one instance of its own
     * ({@link #decode(ByteBuffer, Header)}), valid until its next frame.
     */
    public static final class Header {
        private int type;
        private int flags;
        private int status;
        private long length;
        private long seq;
        private long a;
        private long b;
        private long c;

        /** Fills the header with checked fields. */
        private Header set(int type, int flags, int status, long length, long seq, long a, long b, long c) {
            this.type = type;
            this.flags = flags;
            this.status = status;
            this.length = length;
            this.seq = seq;
            this.a = a;
            this.b = b;
            this.c = c;
            return this;
        }

        /** The frame type. */
        public int type() {
            return type;
        }

        /** The flags (only those the type defines). */
        public int flags() {
            return flags;
        }

        /** The status field. */
        public int status() {
            return status;
        }

        /** The payload length, within the type's maximum. */
        public long length() {
            return length;
        }

        /** The request sequence number. */
        public long seq() {
            return seq;
        }

        /** Type-specific field {@code a}. */
        public long a() {
            return a;
        }

        /** Type-specific field {@code b}. */
        public long b() {
            return b;
        }

        /** Type-specific field {@code c}. */
        public long c() {
            return c;
        }

        @Override
        public String toString() {
            return name(type) + "[flags=" + flags + ", status=" + status + ", length=" + length + ", seq=" + seq
                    + ", a=" + a + ", b=" + b + ", c=" + c + "]";
        }
    }

    /** A frame that breaks the protocol; the connection is dropped with this reason. */
    public static final class ProtocolException extends Exception {
        private static final long serialVersionUID = 1L;

        ProtocolException(String reason) {
            super(reason, null, false, false);
        }
    }

    /** Writes a header at the buffer's position (advancing it). */
    public static void encode(ByteBuffer out, int type, int flags, int status, long length, long seq, long a, long b,
                       long c) {
        out.put((byte) type).put((byte) flags).putShort((short) status).putInt((int) length)
                .putLong(seq).putLong(a).putLong(b).putLong(c);
    }

    /**
     * Reads and checks a header from {@link #HEADER_SIZE} bytes at the buffer's position (advancing it).
     *
     * @throws ProtocolException for an unknown type, flags the type does not define, a status out of
     *         range or a payload over the type's maximum
     */
    public static Header decode(ByteBuffer in) throws ProtocolException {
        return decode(in, new Header());
    }

    /**
     * Reads and checks a header as {@link #decode(ByteBuffer)} does, into {@code into}.
     *
     * @return {@code into}
     */
    public static Header decode(ByteBuffer in, Header into) throws ProtocolException {
        int type = in.get() & 0xff;
        int flags = in.get() & 0xff;
        int status = in.getShort() & 0xffff;
        long length = in.getInt() & 0xffff_ffffL;
        long seq = in.getLong();
        long a = in.getLong();
        long b = in.getLong();
        long c = in.getLong();
        long maxPayload;
        int allowedFlags = 0;
        int maxStatus = 0;
        switch (type) {
            case CONNECT_REQ -> {
                maxPayload = MAX_CONTROL;
                allowedFlags = FLAG_COMMON;
                maxStatus = 0xffff;
                if (length < 2) {
                    throw new ProtocolException("a connect request of " + length + " bytes has no listen port");
                }
            }
            case CONNECT_ACCEPT -> maxPayload = EmuLimits.MAX_PRIVATE_DATA;
            case CONNECT_REJECT -> {
                maxPayload = EmuLimits.MAX_PRIVATE_DATA;
                maxStatus = REJECT_NON_PEER;
                if (status < REJECT_PEER) {
                    throw new ProtocolException("connect reject status " + status);
                }
            }
            case SEND -> {
                maxPayload = MAX_DATA;
                allowedFlags = FLAG_INVALIDATE | FLAG_SOLICITED;
            }
            case RDMA_WRITE, RDMA_READ_RESP -> maxPayload = MAX_DATA;
            case RDMA_READ_REQ -> {
                maxPayload = 0;
                if (c < 0 || c > MAX_DATA) {
                    throw new ProtocolException("RDMA Read of " + Long.toUnsignedString(c) + " bytes");
                }
            }
            case NAK -> {
                maxPayload = 0;
                maxStatus = NAK_REMOTE_RESPONDER;
                if (status < NAK_RNR) {
                    throw new ProtocolException("NAK status " + status);
                }
            }
            case ABORT -> {
                maxPayload = EmuLimits.MAX_PRIVATE_DATA;
                maxStatus = ABORT_BROKEN;
            }
            case CONNECT_DELIVERED, CONNECT_RTU, ACK, RECV_POSTED, DISCONNECT, KEEPALIVE -> maxPayload = 0;
            default -> throw new ProtocolException("unknown frame type " + type);
        }
        if ((flags & ~allowedFlags) != 0) {
            throw new ProtocolException("flags 0x" + Integer.toHexString(flags) + " on frame type " + name(type));
        }
        if (status > maxStatus) {
            throw new ProtocolException("status " + status + " on frame type " + name(type));
        }
        if (length > maxPayload) {
            throw new ProtocolException("payload of " + length + " bytes on frame type " + name(type)
                    + " (at most " + maxPayload + ")");
        }
        return into.set(type, flags, status, length, seq, a, b, c);
    }

    /** The name of a frame type, for messages. */
    public static String name(int type) {
        return switch (type) {
            case CONNECT_REQ -> "CONNECT_REQ";
            case CONNECT_DELIVERED -> "CONNECT_DELIVERED";
            case CONNECT_ACCEPT -> "CONNECT_ACCEPT";
            case CONNECT_REJECT -> "CONNECT_REJECT";
            case CONNECT_RTU -> "CONNECT_RTU";
            case SEND -> "SEND";
            case RDMA_WRITE -> "RDMA_WRITE";
            case RDMA_READ_REQ -> "RDMA_READ_REQ";
            case RDMA_READ_RESP -> "RDMA_READ_RESP";
            case ACK -> "ACK";
            case NAK -> "NAK";
            case RECV_POSTED -> "RECV_POSTED";
            case DISCONNECT -> "DISCONNECT";
            case ABORT -> "ABORT";
            case KEEPALIVE -> "KEEPALIVE";
            default -> "type " + type;
        };
    }
}
