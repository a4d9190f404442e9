package org.jdapl.provider.emu.tcp;

/**
 * The frame types of the tcp wire (PROTOCOL.md, "Frames"), each with its code on the wire and what
 * its header may carry: the flags it defines, its status range and its largest payload. A new frame
 * type is one constant here, one factory and its accessors in {@link Frame}, and a case in the
 * handler that takes it ({@link TcpHandshake} before the connection is open, {@link TcpRcEngine}
 * after); {@link Frame#decode} refuses whatever a type does not define.
 */
public enum FrameType {
    /** Active → passive: the connect request (PROTOCOL.md, Connection handshake). */
    CONNECT_REQ(1, Frame.MAX_CONTROL, Frame.FLAG_COMMON | Frame.FLAG_UD, 0, 0xffff),
    /** Passive → active: the request reached a service point. */
    CONNECT_DELIVERED(2, 0, 0, 0, 0),
    /** Passive → active: the consumer accepted; payload its private data. */
    CONNECT_ACCEPT(3, Frame.MAX_PRIVATE_DATA, 0, 0, 0),
    /** Passive → active: the consumer or the provider rejected; status a {@link Frame.Reject}. */
    CONNECT_REJECT(4, Frame.MAX_PRIVATE_DATA, 0, 1, 2),
    /** Active → passive: ready to use. */
    CONNECT_RTU(5, 0, 0, 0, 0),
    /** A message; flags {@link Frame#FLAG_INVALIDATE}, {@link Frame#FLAG_SOLICITED}. */
    SEND(6, Frame.MAX_DATA, Frame.FLAG_INVALIDATE | Frame.FLAG_SOLICITED, 0, 0),
    /** An RDMA Write with its data. */
    RDMA_WRITE(7, Frame.MAX_DATA, 0, 0, 0),
    /** An RDMA Read request. */
    RDMA_READ_REQ(8, 0, 0, 0, 0),
    /** The data of an RDMA Read. */
    RDMA_READ_RESP(9, Frame.MAX_DATA, 0, 0, 0),
    /** A SEND or RDMA_WRITE was executed. */
    ACK(10, 0, 0, 0, 0),
    /** A request was refused; status a {@link Frame.Nak}. */
    NAK(11, 0, 0, 1, 3),
    /** A receive was posted since the last RNR NAK. */
    RECV_POSTED(12, 0, 0, 0, 0),
    /** Graceful disconnect notification, and its answer. */
    DISCONNECT(13, 0, 0, 0, 0),
    /** Abrupt disconnect or broken connection; status a {@link Frame.Abort}, payload a reason text. */
    ABORT(14, Frame.MAX_PRIVATE_DATA, 0, 0, 1),
    /** Nothing to say (the connection is alive). */
    KEEPALIVE(15, 0, 0, 0, 0),
    /** A fetch-and-add request. */
    FETCH_ADD(16, 0, 0, 0, 0),
    /** A compare-and-swap request; payload the 8-byte swap value. */
    CMP_SWAP(17, 8, 0, 0, 0),
    /** The answer of a FETCH_ADD or CMP_SWAP: the value the target held. */
    ATOMIC_RESP(18, 0, 0, 0, 0),
    /** An RDMA Write with immediate data, with its data. */
    RDMA_WRITE_IMM(19, Frame.MAX_DATA, 0, 0, 0),
    /** A datagram of a UD exchange: {@code a} the source qpn, {@code b} the destination qpn. */
    DATAGRAM(20, Frame.MAX_DATAGRAM, 0, 0, 0);

    private static final FrameType[] BY_CODE = new FrameType[256];

    static {
        for (FrameType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;
    private final long maxPayload;
    private final int flags;
    private final int minStatus;
    private final int maxStatus;

    FrameType(int code, long maxPayload, int flags, int minStatus, int maxStatus) {
        this.code = code;
        this.maxPayload = maxPayload;
        this.flags = flags;
        this.minStatus = minStatus;
        this.maxStatus = maxStatus;
    }

    /** The type's code on the wire (the header's first byte). */
    public int code() {
        return code;
    }

    /** The largest payload a frame of this type may carry. */
    long maxPayload() {
        return maxPayload;
    }

    /** The flags this type defines. */
    int flags() {
        return flags;
    }

    /** Whether {@code status} is one this type defines. */
    boolean statusAllowed(int status) {
        return status >= minStatus && status <= maxStatus;
    }

    /** Whether an abort keeps a queued frame of this type (answers to the peer's requests, keepalives). */
    boolean isAnswer() {
        return this == ACK || this == NAK || this == KEEPALIVE;
    }

    /** The type of wire code {@code code} (0..255), or null for a code no type has. */
    static FrameType of(int code) {
        return BY_CODE[code];
    }
}
