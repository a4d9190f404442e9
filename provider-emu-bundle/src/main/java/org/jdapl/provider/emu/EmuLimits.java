package org.jdapl.provider.emu;

import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.Qos;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.provider.emu.tcp.Frame;

/** The documented limits of the emulated provider, and the IA and provider attributes built from them. */
public final class EmuLimits {
    /** The provider's name (the {@code dat.provider} service property). */
    static final String PROVIDER_NAME = "emu";
    /** The provider's version. */
    static final String PROVIDER_VERSION = "1.0";
    /** The largest private data of a connect, accept or reject, in bytes. */
    public static final int MAX_PRIVATE_DATA = Frame.MAX_PRIVATE_DATA;
    /** How long a send waits for a receive at the peer before it completes RECEIVER_NOT_READY. */
    public static final long RNR_RETRY_MILLIS = Long.getLong("jdapl.emu.rnrRetryMillis", 1000L);
    /** The most unanswered connection requests a PSP holds; more are NON_PEER_REJECTED. */
    static final int PSP_BACKLOG = 128;
    static final int MAX_EPS = 1 << 16;
    static final int MAX_DTO_PER_EP = 1 << 16;
    public static final int MAX_RDMA_READ_PER_EP = 64;
    static final int MAX_EVDS = 1 << 16;
    static final int MAX_EVD_QLEN = 1 << 20;
    public static final int MAX_IOV = 64;
    static final int MAX_LMRS = 1 << 20;
    static final int MAX_PZS = 1 << 16;
    static final long MAX_MESSAGE_SIZE = 1L << 31;
    static final long MAX_RDMA_SIZE = 1L << 31;
    static final int MAX_RMRS = 1 << 20;
    static final int MAX_SRQS = 1 << 16;
    static final int MAX_RECV_PER_SRQ = 1 << 16;

    private EmuLimits() {
    }

    static IaAttributes iaAttributes(String adapterName, SocketAddress address, String fabric) {
        return new IaAttributes(adapterName, "jdapl", 1, 0, 1, 0, address, MAX_EPS, MAX_DTO_PER_EP,
                MAX_RDMA_READ_PER_EP, MAX_RDMA_READ_PER_EP, MAX_EVDS, MAX_EVD_QLEN, MAX_IOV, MAX_LMRS,
                Long.MAX_VALUE, MAX_PZS, MAX_MESSAGE_SIZE, MAX_RDMA_SIZE, MAX_RMRS, MAX_SRQS, MAX_RECV_PER_SRQ,
                MAX_PRIVATE_DATA, true,
                Map.of("fabric", fabric, "rnr_retry_ms", Long.toString(RNR_RETRY_MILLIS),
                        "psp_backlog", Integer.toString(PSP_BACKLOG)));
    }

    static ProviderAttributes providerAttributes(boolean extensions, boolean datagrams) {
        String ext = Boolean.toString(extensions).toUpperCase(java.util.Locale.ROOT);
        String ud = Boolean.toString(datagrams).toUpperCase(java.util.Locale.ROOT);
        return new ProviderAttributes(PROVIDER_NAME, 1, 0, Dat.VERSION_MAJOR, Dat.VERSION_MINOR, true,
                Set.of(Qos.BEST_EFFORT), EnumSet.allOf(CompletionFlag.class), true, MAX_PRIVATE_DATA, 64, true,
                true, Map.of("fabrics", "loopback,tcp",
                "tcp_protocol_version", Integer.toString(Frame.VERSION),
                ProviderAttributes.DAT_COUNTERS, "TRUE",
                ProviderAttributes.DAT_IB_FETCH_AND_ADD, ext, ProviderAttributes.DAT_IB_CMP_AND_SWAP, ext,
                ProviderAttributes.DAT_IB_IMMED_DATA, ext, ProviderAttributes.DAT_IB_UD, ud));
    }

    /**
     * @throws org.jdapl.dat.DatException INVALID_PARAMETER (argument 6) for EP attributes over these limits
     */
    static EpAttributes checkEpAttributes(EpAttributes a, boolean withSrq) {
        if (a.maxMessageSize() > MAX_MESSAGE_SIZE || a.maxRdmaSize() > MAX_RDMA_SIZE
                || a.maxRecvDtos() > MAX_DTO_PER_EP || a.maxRequestDtos() > MAX_DTO_PER_EP
                || a.maxRecvIov() > MAX_IOV || a.maxRequestIov() > MAX_IOV
                || a.maxRdmaReadIn() > MAX_RDMA_READ_PER_EP
                || a.maxRdmaReadOut() > MAX_RDMA_READ_PER_EP) {
            throw DatException.invalidParameter(6, "EP attributes over the IA's limits: " + a);
        }
        return a;
    }

    /**
     * @throws org.jdapl.dat.DatException INVALID_PARAMETER (argument 2) for a length of {@code what} (an
     *     EVD, the asynchronous EVD) outside 1..{@link #MAX_EVD_QLEN}
     */
    static void checkEvdQlen(int qlen, String what) {
        if (qlen < 1 || qlen > MAX_EVD_QLEN) {
            throw DatException.invalidParameter(2, what + " length " + qlen + " is not in 1.." + MAX_EVD_QLEN);
        }
    }

    /**
     * @throws org.jdapl.dat.DatException INVALID_PARAMETER (argument 3) for no SRQ attributes or ones over
     *     these limits
     */
    static void checkSrqAttributes(SrqAttributes a) {
        if (a == null) {
            throw DatException.invalidParameter(3, "no SRQ attributes");
        }
        if (a.maxRecvDtos() > MAX_RECV_PER_SRQ || a.maxRecvIov() > MAX_IOV) {
            throw DatException.invalidParameter(3, "SRQ attributes over the IA's limits: " + a);
        }
    }

    /**
     * A copy of connection private data ({@code null}: none), at most {@link #MAX_PRIVATE_DATA} bytes.
     *
     * @throws org.jdapl.dat.DatException INVALID_PARAMETER (argument {@code arg}) when longer
     */
    static byte[] privateData(byte[] data, int arg) {
        if (data == null) {
            return new byte[0];
        }
        if (data.length > MAX_PRIVATE_DATA) {
            throw DatException.invalidParameter(arg, data.length + " bytes of private data, over the maximum of "
                    + MAX_PRIVATE_DATA);
        }
        return data.clone();
    }
}
