package org.jdapl.provider.emu.tcp;

import java.nio.ByteBuffer;

/**
 * One frame of the emulated provider's tcp wire (PROTOCOL.md, "Frames"): a header of
 * {@link #HEADER_SIZE} bytes, big-endian ({@code type flags status length seq a b c}), and a payload
 * of {@code length} bytes. This class is the one place the header is encoded ({@link #encode}) and
 * decoded ({@link #decode}, which checks every field against its {@link FrameType} before any of it
 * is used), and it names the fields: a factory per frame type fills a frame for output
 * ({@link #send}, {@link #rdmaWrite}, {@link #ack}, ...), and the accessors read the fields of a
 * received one by their meaning ({@link #rmrContext}, {@link #targetAddress}, {@link #nak}, ...), as
 * PROTOCOL.md's table of frames does.
 *
 * <p>A frame is a reusable holder, not a value: a connection decodes every frame it receives into one
 * instance of its own, valid until its next frame, and its output queue recycles the frames it has
 * encoded, so that the data path allocates none.
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
    /** The most private data a connect, accept or reject carries (the provider's {@code maxPrivateDataSize}). */
    public static final int MAX_PRIVATE_DATA = 256;
    /** The largest payload of a control frame: a connect request's listening port and private data. */
    public static final int MAX_CONTROL = 2 + MAX_PRIVATE_DATA;

    /** CONNECT_REQ flag: the request is for a common service point (qualifier = its port). */
    public static final int FLAG_COMMON = 0x01;
    /** CONNECT_REQ flag: a UD exchange (PROTOCOL.md, Datagrams); field {@code b} is the active EP's qpn. */
    public static final int FLAG_UD = 0x02;
    /** The largest payload of a DATAGRAM: the UD MTU. */
    public static final int MAX_DATAGRAM = 4096;
    /** SEND flag: invalidate the rmr_context in field {@code a} at the receiver. */
    public static final int FLAG_INVALIDATE = 0x01;
    /** SEND flag: the sender asked for a solicited completion. */
    public static final int FLAG_SOLICITED = 0x02;

    /** The status of a CONNECT_REJECT. */
    public enum Reject {
        /** The remote consumer rejected (payload: its private data). */
        PEER,
        /** No listener, a full backlog, another version (payload: a reason text). */
        NON_PEER;

        int code() {
            return ordinal() + 1;
        }
    }

    /** The status of a NAK. */
    public enum Nak {
        /** No receive was posted (the sender retries). */
        RNR,
        /** The rmr_context, bounds or privileges refused an RDMA, or an invalidate was refused. */
        REMOTE_ACCESS,
        /** The receive was too small or unusable. */
        REMOTE_RESPONDER;

        int code() {
            return ordinal() + 1;
        }
    }

    /** The status of an ABORT. */
    public enum Abort {
        /** An abrupt disconnect (the peer reports DISCONNECTED). */
        DISCONNECT,
        /** The connection broke (the peer reports BROKEN). */
        BROKEN;

        int code() {
            return ordinal();
        }
    }

    private FrameType type;
    private int flags;
    private int status;
    private long length;
    private long seq;
    private long a;
    private long b;
    private long c;
    /** What follows the header on output: a byte[], a MemorySegment, or a segment list (List of LmrTriplet). */
    private Object payload;

    /** A frame that breaks the protocol; the connection is dropped with this reason. */
    public static final class ProtocolException extends Exception {
        private static final long serialVersionUID = 1L;

        ProtocolException(String reason) {
            super(reason, null, false, false);
        }
    }

    // ------------------------------------------------------------------ factories, one per frame type

    private Frame set(FrameType type, int flags, int status, long seq, long a, long b, long c, long length,
                      Object payload) {
        this.type = type;
        this.flags = flags;
        this.status = status;
        this.seq = seq;
        this.a = a;
        this.b = b;
        this.c = c;
        this.length = length;
        this.payload = payload;
        return this;
    }

    private Frame control(FrameType type, int flags, int status, long a, long b, long c, byte[] payload) {
        return set(type, flags, status, 0, a, b, c, payload == null ? 0 : payload.length, payload);
    }

    /** CONNECT_REQ: {@code payload} is the active IA's listening port (u16) and the private data. */
    Frame connectRequest(int version, long connQual, long activePortQual, boolean common, byte[] payload) {
        return control(FrameType.CONNECT_REQ, common ? FLAG_COMMON : 0, version, connQual, activePortQual, MAGIC,
                payload);
    }

    /** CONNECT_DELIVERED. */
    Frame connectDelivered() {
        return control(FrameType.CONNECT_DELIVERED, 0, 0, 0, 0, 0, null);
    }

    /** CONNECT_ACCEPT with the passive EP's port qualifier and private data. */
    Frame connectAccept(long passivePortQual, byte[] privateData) {
        return control(FrameType.CONNECT_ACCEPT, 0, 0, passivePortQual, 0, 0, privateData);
    }

    /** CONNECT_REJECT: the private data (PEER) or a reason text (NON_PEER). */
    Frame connectReject(Reject reason, byte[] payload) {
        return control(FrameType.CONNECT_REJECT, 0, reason.code(), 0, 0, 0, payload);
    }

    /** CONNECT_RTU. */
    Frame connectRtu() {
        return control(FrameType.CONNECT_RTU, 0, 0, 0, 0, 0, null);
    }

    /** SEND of {@code length} bytes of {@code iov} (invalidating {@code invalidateContext} if asked). */
    Frame send(long seq, boolean invalidate, int invalidateContext, boolean solicited, long length, Object iov) {
        int f = (invalidate ? FLAG_INVALIDATE : 0) | (solicited ? FLAG_SOLICITED : 0);
        return set(FrameType.SEND, f, 0, seq, invalidateContext & 0xffff_ffffL, 0, 0, length, iov);
    }

    /** RDMA_WRITE of {@code length} bytes of {@code iov} to {@code targetAddress} of {@code rmrContext}. */
    Frame rdmaWrite(long seq, int rmrContext, long targetAddress, long length, Object iov) {
        return set(FrameType.RDMA_WRITE, 0, 0, seq, rmrContext & 0xffff_ffffL, targetAddress, 0, length, iov);
    }

    /** RDMA_READ_REQ of {@code readLength} bytes at {@code sourceAddress} of {@code rmrContext}. */
    Frame rdmaReadRequest(long seq, int rmrContext, long sourceAddress, long readLength) {
        return set(FrameType.RDMA_READ_REQ, 0, 0, seq, rmrContext & 0xffff_ffffL, sourceAddress, readLength, 0, null);
    }

    /** RDMA_READ_RESP: the read's data, straight from {@code source}. */
    Frame rdmaReadResponse(long seq, long length, Object source) {
        return set(FrameType.RDMA_READ_RESP, 0, 0, seq, 0, 0, 0, length, source);
    }

    /** ACK of request {@code seq}. */
    Frame ack(long seq) {
        return set(FrameType.ACK, 0, 0, seq, 0, 0, 0, 0, null);
    }

    /** NAK of request {@code seq}. */
    Frame nak(long seq, Nak reason) {
        return set(FrameType.NAK, 0, reason.code(), seq, 0, 0, 0, 0, null);
    }

    /** RECV_POSTED. */
    Frame recvPosted() {
        return control(FrameType.RECV_POSTED, 0, 0, 0, 0, 0, null);
    }

    /** DISCONNECT. */
    Frame disconnect() {
        return control(FrameType.DISCONNECT, 0, 0, 0, 0, 0, null);
    }

    /** ABORT with an optional reason text. */
    Frame abort(Abort reason, byte[] text) {
        return control(FrameType.ABORT, 0, reason.code(), 0, 0, 0, text);
    }

    /** KEEPALIVE. */
    Frame keepalive() {
        return control(FrameType.KEEPALIVE, 0, 0, 0, 0, 0, null);
    }

    /** FETCH_ADD of {@code add} to the 64 bits at {@code targetAddress} of {@code rmrContext}. */
    Frame fetchAdd(long seq, int rmrContext, long targetAddress, long add) {
        return set(FrameType.FETCH_ADD, 0, 0, seq, rmrContext & 0xffff_ffffL, targetAddress, add, 0, null);
    }

    /** CMP_SWAP at {@code targetAddress} of {@code rmrContext}: the swap value is the payload {@code swap}. */
    Frame cmpSwap(long seq, int rmrContext, long targetAddress, long compare, byte[] swap) {
        return set(FrameType.CMP_SWAP, 0, 0, seq, rmrContext & 0xffff_ffffL, targetAddress, compare, swap.length, swap);
    }

    /** ATOMIC_RESP of request {@code seq}: the value the target held. */
    Frame atomicResponse(long seq, long original) {
        return set(FrameType.ATOMIC_RESP, 0, 0, seq, original, 0, 0, 0, null);
    }

    /** RDMA_WRITE_IMM of {@code length} bytes of {@code iov} to {@code targetAddress}, with {@code immediateData}. */
    Frame rdmaWriteImmediate(long seq, int rmrContext, long targetAddress, int immediateData, long length, Object iov) {
        return set(FrameType.RDMA_WRITE_IMM, 0, 0, seq, rmrContext & 0xffff_ffffL, targetAddress,
                immediateData & 0xffff_ffffL, length, iov);
    }

    /** Forgets the payload (a recycled frame keeps no memory reachable). */
    void clearPayload() {
        payload = null;
    }

    // ------------------------------------------------------------------ fields by their meaning

    /** The frame type. */
    public FrameType type() {
        return type;
    }

    /** The payload length, within the type's maximum. */
    public long length() {
        return length;
    }

    /** The request sequence number (SEND, RDMA_WRITE, RDMA_READ_REQ) or the one answered (ACK, NAK, RDMA_READ_RESP). */
    public long seq() {
        return seq;
    }

    /** The raw status field. */
    public int status() {
        return status;
    }

    /** What follows the header on output. */
    Object payload() {
        return payload;
    }

    /** CONNECT_REQ: the protocol version of the requester. */
    public int version() {
        return status;
    }

    /** CONNECT_REQ: the magic ({@link #MAGIC}). */
    public long magic() {
        return c;
    }

    /** CONNECT_REQ: the connection qualifier asked for. */
    public long connQual() {
        return a;
    }

    /** CONNECT_REQ: the active EP's port qualifier. */
    public long activePortQual() {
        return b;
    }

    /** CONNECT_REQ: for a common service point. */
    public boolean common() {
        return (flags & FLAG_COMMON) != 0;
    }

    /** CONNECT_REQ: a UD exchange, not an RC connection. */
    public boolean ud() {
        return (flags & FLAG_UD) != 0;
    }

    /** DATAGRAM: the sender's qpn. */
    public int sourceQpn() {
        return (int) a;
    }

    /** DATAGRAM: the receiver's qpn. */
    public int destinationQpn() {
        return (int) b;
    }

    /** CONNECT_ACCEPT: the passive EP's port qualifier. */
    public long passivePortQual() {
        return a;
    }

    /** CONNECT_REJECT: who rejected. */
    public Reject reject() {
        return Reject.values()[status - 1];
    }

    /** SEND: the sender asks the receiver to invalidate {@link #invalidateContext}. */
    public boolean invalidate() {
        return (flags & FLAG_INVALIDATE) != 0;
    }

    /** SEND: the rmr_context to invalidate. */
    public long invalidateContext() {
        return a;
    }

    /** SEND: the sender asked for a solicited completion. */
    public boolean solicited() {
        return (flags & FLAG_SOLICITED) != 0;
    }

    /** RDMA_WRITE, RDMA_WRITE_IMM, RDMA_READ_REQ, FETCH_ADD, CMP_SWAP: the rmr_context (u32) of the target memory. */
    public long rmrContext() {
        return a;
    }

    /** RDMA_WRITE: the address written; RDMA_READ_REQ: the address read. */
    public long targetAddress() {
        return b;
    }

    /** FETCH_ADD: the value added. */
    public long addValue() {
        return c;
    }

    /** CMP_SWAP: the value compared with the target's. */
    public long compareValue() {
        return c;
    }

    /** ATOMIC_RESP: the value the target held before the atomic. */
    public long originalValue() {
        return a;
    }

    /** RDMA_WRITE_IMM: the 32-bit immediate data. */
    public int immediateData() {
        return (int) c;
    }

    /** RDMA_READ_REQ: the bytes to read (at most {@link #MAX_DATA}). */
    public long readLength() {
        return c;
    }

    /** NAK: why. */
    public Nak nak() {
        return Nak.values()[status - 1];
    }

    /** ABORT: abrupt disconnect or broken. */
    public Abort abort() {
        return Abort.values()[status];
    }

    // ------------------------------------------------------------------ encode, decode

    /** Writes this frame's header at the buffer's position (advancing it). */
    void encode(ByteBuffer out) {
        encode(out, type.code(), flags, status, length, seq, a, b, c);
    }

    /** Writes a header of raw fields at the buffer's position (advancing it); what tests forge frames with. */
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
    public static Frame decode(ByteBuffer in) throws ProtocolException {
        return decode(in, new Frame());
    }

    /**
     * Reads and checks a header as {@link #decode(ByteBuffer)} does, into {@code into}.
     *
     * @return {@code into}
     */
    public static Frame decode(ByteBuffer in, Frame into) throws ProtocolException {
        int code = in.get() & 0xff;
        int flags = in.get() & 0xff;
        int status = in.getShort() & 0xffff;
        long length = in.getInt() & 0xffff_ffffL;
        long seq = in.getLong();
        long a = in.getLong();
        long b = in.getLong();
        long c = in.getLong();
        FrameType type = FrameType.of(code);
        if (type == null) {
            throw new ProtocolException("unknown frame type " + code);
        }
        if ((flags & ~type.flags()) != 0) {
            throw new ProtocolException("flags 0x" + Integer.toHexString(flags) + " on frame type " + type);
        }
        if (!type.statusAllowed(status)) {
            throw new ProtocolException(type + " status " + status);
        }
        if (length > type.maxPayload()) {
            throw new ProtocolException("payload of " + length + " bytes on frame type " + type
                    + " (at most " + type.maxPayload() + ")");
        }
        if (type == FrameType.CONNECT_REQ && length < 2) {
            throw new ProtocolException("a connect request of " + length + " bytes has no listen port");
        }
        if (type == FrameType.CONNECT_REQ && (flags & FLAG_UD) != 0 && (flags & FLAG_COMMON) != 0) {
            throw new ProtocolException("a UD exchange request for a common service point");
        }
        if (type == FrameType.CMP_SWAP && length != 8) {
            throw new ProtocolException("a compare-and-swap with " + length + " bytes of swap value");
        }
        if (type == FrameType.RDMA_WRITE_IMM && (c >>> 32) != 0) {
            throw new ProtocolException("immediate data over 32 bits");
        }
        if (type == FrameType.RDMA_READ_REQ && (c < 0 || c > MAX_DATA)) {
            throw new ProtocolException("RDMA Read of " + Long.toUnsignedString(c) + " bytes");
        }
        return into.set(type, flags, status, seq, a, b, c, length, null);
    }

    @Override
    public String toString() {
        return type + "[flags=" + flags + ", status=" + status + ", length=" + length + ", seq=" + seq
                + ", a=" + a + ", b=" + b + ", c=" + c + "]";
    }
}
