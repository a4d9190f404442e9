package org.jdapl.provider.ofi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One message of jdapl's connection protocol over RDM endpoints (RDM_PROTOCOL.md): a fixed header
 * (magic, version, type, flags, the sender's and the receiver's connection ids, the sender IA's IPv4
 * address and a port) and four byte strings: the sender's control address, its data address (both
 * as {@code fi_getname} gives them), the private data, and the address of the endpoint that sent the
 * message (a connection's control endpoint, a PSP's, or the IA's hub {@link RdmHub}), where a reply goes.
 *
 * @param type REQ, ACCEPT, REJECT, RTU, DISC, ABORT or KEEPALIVE
 * @param flags REJECT: {@link #PEER} when the consumer rejected
 * @param src the sender's connection id
 * @param dst the receiver's connection id (0 in a REQ)
 * @param ip the sender IA's IPv4 address
 * @param port the connection qualifier (REQ) or the sender's local port
 * @param ctl the sender's control endpoint address
 * @param data the sender's data endpoint address
 * @param pd the private data
 * @param from the address of the endpoint that sent the message
 */
record RdmMessage(int type, int flags, long src, long dst, int ip, int port, byte[] ctl, byte[] data, byte[] pd,
        byte[] from) {
    static final int MAGIC = 0x4a44524d; // "JDRM"
    static final int VERSION = 1;
    static final int REQ = 1;
    static final int ACCEPT = 2;
    static final int REJECT = 3;
    static final int RTU = 4;
    static final int DISC = 5;
    static final int ABORT = 6;
    static final int KEEPALIVE = 7;
    /** REJECT flag: the consumer's reject (PEER_REJECTED), not the provider's (NON_PEER_REJECTED). */
    static final int PEER = 1;
    /** KEEPALIVE flag: the peer answers at once with {@link #ANSWER} while its side is connected. */
    static final int PROBE = 1;
    /** KEEPALIVE flag: the answer to a {@link #PROBE}. */
    static final int ANSWER = 2;
    static final int HEADER = 4 + 1 + 1 + 2 + 8 + 8 + 4 + 4 + 2 + 2 + 2 + 2;
    /** The private data a connect, accept or reject carries at most. */
    static final int MAX_PRIVATE_DATA = 256;
    static final int MAX_ADDRESS = 256;
    /** The private data field at most: the consumer's and the receive credits' header before it ({@link MsgCredits}). */
    static final int MAX_PD_FIELD = MAX_PRIVATE_DATA + MsgCredits.HEADER;
    /** The size of every control buffer. */
    static final int BUFFER = HEADER + 3 * MAX_ADDRESS + MAX_PD_FIELD;

    private static final byte[] NONE = new byte[0];

    static RdmMessage of(int type, int flags, long src, long dst) {
        return new RdmMessage(type, flags, src, dst, 0, 0, NONE, NONE, NONE, NONE);
    }

    /** Writes the message; its length. */
    int encode(ByteBuffer b) {
        b.clear();
        b.order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).put((byte) VERSION).put((byte) type).putShort((short) flags).putLong(src).putLong(dst)
                .putInt(ip).putInt(port).putShort((short) ctl.length).putShort((short) data.length)
                .putShort((short) pd.length).putShort((short) from.length).put(ctl).put(data).put(pd).put(from);
        return b.position();
    }

    /** Reads a message of {@code len} bytes; null if it is not one of this protocol's. */
    static RdmMessage decode(ByteBuffer b, int len) {
        b.clear();
        b.order(ByteOrder.LITTLE_ENDIAN);
        if (len < HEADER || b.getInt() != MAGIC || b.get() != VERSION) {
            return null;
        }
        int type = b.get();
        int flags = b.getShort();
        long src = b.getLong();
        long dst = b.getLong();
        int ip = b.getInt();
        int port = b.getInt();
        int c = b.getShort() & 0xffff;
        int d = b.getShort() & 0xffff;
        int p = b.getShort() & 0xffff;
        int f = b.getShort() & 0xffff;
        if (c > MAX_ADDRESS || d > MAX_ADDRESS || p > MAX_PD_FIELD || f > MAX_ADDRESS || HEADER + c + d + p + f > len) {
            return null;
        }
        byte[] ctl = new byte[c];
        byte[] data = new byte[d];
        byte[] pd = new byte[p];
        byte[] from = new byte[f];
        b.get(ctl).get(data).get(pd).get(from);
        return new RdmMessage(type, flags, src, dst, ip, port, ctl, data, pd, from);
    }

    /** An IPv4 address as the header's int. */
    static int ip(InetAddress a) {
        byte[] b = a.getAddress();
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    /** The header's int as an IPv4 address. */
    static InetAddress ip(int v) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
