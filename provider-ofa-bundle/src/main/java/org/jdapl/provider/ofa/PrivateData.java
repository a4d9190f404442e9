package org.jdapl.provider.ofa;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;

/**
 * Private data on the wire, in one of two conventions chosen by the IA's name ({@link #of}).
 *
 * <p>The IB CM carries fixed-size private data: rdma_cm hands the receiver its whole buffer (56
 * bytes of a REQ, 196 of a REP, 148 of a REJ on IB and RoCE), whatever length the sender gave.
 * <ul>
 * <li>{@link #OFED} ({@code ofa-v2-*} IAs, as OFED's uDAPL cma provider, {@code openib_cma/cm.c}):
 * connect and accept private data go as the consumer gave them, and the receiver gets the
 * transport's whole buffer (the consumer's bytes, then zeros). A consumer's reject carries the
 * 4-byte {@code dapl_pdata_hdr} (DAT major and minor, provider major and minor, network order)
 * before the consumer's bytes; the active side reports PEER_REJECTED, with the bytes after the
 * header, only for a consumer-defined REJ (reason 28) that has the header, and NON_PEER_REJECTED
 * otherwise. A provider's own reject carries nothing. This is what C uDAPL peers send and expect.</li>
 * <li>{@link #JDAPL} (any other IA name): one header byte in front of the consumer's bytes keeps
 * their length: bits 0..6 the length, bit 7 set when the provider (not the consumer) rejected. The
 * receiver gets exactly the bytes the consumer gave.</li>
 * </ul>
 * Connection qualifiers map to rdma_cm ports the same way in both ({@link #port}).
 *
 * <p>Behaviours: CONN_10, CONN_13.
 */
enum PrivateData {
    /** jdapl's own: a length byte in front, exact sizes at the receiver. */
    JDAPL(55),
    /** OFED uDAPL's: no header on connect and accept, {@code dapl_pdata_hdr} on a consumer's reject. */
    OFED(56);

    /** rdma_cm's private data limit of a connect request (IB CM REQ less the rdma_cm header): OFED's max, jdapl's less its length byte. */
    static final int TRANSPORT_MAX = 56;
    /** The length of OFED's {@code dapl_pdata_hdr}. */
    static final int OFED_HEADER = 4;
    private static final int PROVIDER_FLAG = 0x80;
    /** The IA name prefix of OFED's cma provider entries in dat.conf. */
    static final String OFED_PREFIX = "ofa-v2-";

    /** The most private data a consumer may pass to connect, accept or reject. */
    final int max;

    PrivateData(int max) {
        this.max = max;
    }

    /** The convention of the IA named {@code iaName}: OFED's for {@code ofa-v2-*}, jdapl's otherwise. */
    static PrivateData of(String iaName) {
        return iaName.startsWith(OFED_PREFIX) ? OFED : JDAPL;
    }

    /**
     * Checks a consumer's private data.
     *
     * @throws DatException INVALID_PARAMETER if it is over {@link #max}
     */
    byte[] check(byte[] data, int arg) {
        byte[] d = data == null ? new byte[0] : data;
        if (d.length > max) {
            throw DatException.invalidParameter(arg, d.length + " bytes of private data exceed the ofa provider's "
                    + max + (this == JDAPL ? " (rdma_cm's " + TRANSPORT_MAX + " less a length byte)"
                    : " (rdma_cm's connect request)"));
        }
        return d;
    }

    /** What a connect or an accept puts on the wire for the consumer's {@code data}. */
    byte[] connect(byte[] data) {
        return this == OFED ? data : encode(data, false);
    }

    /** What a consumer's reject puts on the wire for its {@code data}. */
    byte[] consumerReject(byte[] data) {
        if (this == JDAPL) {
            return encode(data, false);
        }
        return ByteBuffer.allocate(OFED_HEADER + data.length).putInt(ofedVersion()).put(data).array();
    }

    /** What the provider's own reject (nobody takes the request) puts on the wire. */
    byte[] providerReject() {
        return this == OFED ? new byte[0] : encode(new byte[0], true);
    }

    /** The consumer's view of a connect request's or an accept's private data as it arrived. */
    byte[] received(byte[] wire) {
        return this == OFED ? wire : decode(wire);
    }

    /**
     * The peer consumer's private data of a REJ, or null if the reject is not the peer consumer's
     * (a provider's, a CM's, or one without the convention's header): NON_PEER_REJECTED then.
     */
    byte[] peerRejected(int status, byte[] wire) {
        if (status != RdmaCm.REJECT_CONSUMER_DEFINED) {
            return null;
        }
        if (this == JDAPL) {
            return byConsumer(wire) ? decode(wire) : null;
        }
        if (wire.length < OFED_HEADER || wire[0] != Dat.VERSION_MAJOR || wire[1] != Dat.VERSION_MINOR) {
            return null;
        }
        return Arrays.copyOfRange(wire, OFED_HEADER, wire.length);
    }

    /**
     * OFED's {@code dapl_pdata_hdr.version}: DAT major and minor, then the provider's major and
     * minor (each a byte, in network order).
     */
    static int ofedVersion() {
        String[] v = OfaProvider.VERSION.split("\\.");
        return Dat.VERSION_MAJOR << 24 | Dat.VERSION_MINOR << 16 | (Integer.parseInt(v[0]) & 0xff) << 8
                | Integer.parseInt(v[1]) & 0xff;
    }

    private static byte[] encode(byte[] data, boolean byProvider) {
        byte[] w = new byte[data.length + 1];
        w[0] = (byte) (data.length | (byProvider ? PROVIDER_FLAG : 0));
        System.arraycopy(data, 0, w, 1, data.length);
        return w;
    }

    /** The consumer's bytes of a jdapl wire form (the bytes as they came if they have no valid header). */
    private static byte[] decode(byte[] wire) {
        if (wire.length == 0) {
            return wire;
        }
        int len = wire[0] & 0x7f;
        if (len > wire.length - 1) {
            return wire.clone();
        }
        return Arrays.copyOfRange(wire, 1, 1 + len);
    }

    private static boolean byConsumer(byte[] wire) {
        return wire.length > 0 && (wire[0] & PROVIDER_FLAG) == 0 && (wire[0] & 0x7f) <= wire.length - 1;
    }

    /**
     * The rdma_cm port (RDMA_PS_TCP) of a DAT connection qualifier, as OFED's {@code SID_TO_PORT}
     * maps it: a qualifier up to 0xffff is the port itself (0 stays 0: rdma_cm picks a port), a
     * larger one (unsigned) folds to {@code qual % 32001 + 33534}, into 33534..65534.
     */
    static int port(long connQual) {
        if (Long.compareUnsigned(connQual, 0xffff) <= 0) {
            return (int) connQual;
        }
        return (int) Long.remainderUnsigned(connQual, 32001) + (65535 - 32001);
    }
}
