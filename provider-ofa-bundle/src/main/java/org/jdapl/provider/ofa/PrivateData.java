package org.jdapl.provider.ofa;

import java.util.Arrays;
import org.jdapl.dat.DatException;

/**
 * Private data on the wire. The IB CM carries fixed-size private data (rdma_cm hands the receiver
 * all 56 bytes of a REQ, 148 of a REJ), so the consumer's length would be lost; one header byte in
 * front of the consumer's bytes keeps it: bits 0..6 the length, bit 7 set when the provider (not
 * the consumer) rejected. The consumer may therefore send up to {@link #MAX} bytes: rdma_cm's 56
 * bytes of a REQ in the RDMA_PS_TCP port space, less the header.
 */
final class PrivateData {
    /** rdma_cm's private data limit of a connect request (IB CM REQ less the rdma_cm header). */
    static final int TRANSPORT_MAX = 56;
    /** The most private data a consumer may pass to connect, accept or reject. */
    static final int MAX = TRANSPORT_MAX - 1;
    private static final int PROVIDER_FLAG = 0x80;

    private PrivateData() {
    }

    /**
     * Checks a consumer's private data.
     *
     * @throws DatException INVALID_PARAMETER if it is over {@link #MAX}
     */
    static byte[] check(byte[] data, int arg) {
        byte[] d = data == null ? new byte[0] : data;
        if (d.length > MAX) {
            throw DatException.invalidParameter(arg, d.length + " bytes of private data exceed the ofa provider's "
                    + MAX + " (rdma_cm's " + TRANSPORT_MAX + " less a length byte)");
        }
        return d;
    }

    /** The wire form: the header byte and the bytes. */
    static byte[] encode(byte[] data, boolean byProvider) {
        byte[] w = new byte[data.length + 1];
        w[0] = (byte) (data.length | (byProvider ? PROVIDER_FLAG : 0));
        System.arraycopy(data, 0, w, 1, data.length);
        return w;
    }

    /** The consumer's bytes of a wire form (the bytes as they came if they have no valid header). */
    static byte[] decode(byte[] wire) {
        if (wire.length == 0) {
            return wire;
        }
        int len = wire[0] & 0x7f;
        if (len > wire.length - 1) {
            return wire.clone();
        }
        return Arrays.copyOfRange(wire, 1, 1 + len);
    }

    /** Whether a reject's wire form says the consumer (not a provider) rejected. */
    static boolean byConsumer(byte[] wire) {
        return wire.length > 0 && (wire[0] & PROVIDER_FLAG) == 0 && (wire[0] & 0x7f) <= wire.length - 1;
    }

    /**
     * The rdma_cm port (RDMA_PS_TCP) of a DAT connection qualifier: itself for 1..65535, otherwise
     * folded into 1..65535 (OFED's uDAPL truncates qualifiers to 16 bits in the same way).
     */
    static int port(long connQual) {
        if (connQual >= 1 && connQual <= 0xffff) {
            return (int) connQual;
        }
        return 1 + (int) Long.remainderUnsigned(connQual, 0xffff);
    }
}
