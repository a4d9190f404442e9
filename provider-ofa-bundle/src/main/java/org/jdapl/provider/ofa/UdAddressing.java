package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.provider.ofa.verbs.Structs.IbvAhAttr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * The address handles of one datagram endpoint ({@link OfaUdEp}): {@code ibv_create_ah} from the
 * {@code ah_attr} rdma_cm computed for a UD exchange (the active side's ESTABLISHED event), or from
 * the peer's IPv4 address as a RoCE GID ({@code ::ffff:a.b.c.d}, the passive side, which the SIDR
 * request gives no address vector, and the sender of a datagram no exchange named), with the
 * source GID's index looked up in the port's table. The handles live until the endpoint is freed.
 * Guarded by the endpoint's lock.
 *
 * <p>Behaviours: EXT_08.
 */
final class UdAddressing {
    /** The hop limit of a datagram's GRH (RoCE v2: the IP TTL). */
    private static final int HOP_LIMIT = 64;

    private final OfaUdEp ep;
    private final List<OfaAh> handles = new ArrayList<>();
    /** The index of the IA address's GID in the port's table, -1 until looked up. */
    private int sgidIndex = -1;

    UdAddressing(OfaUdEp ep) {
        this.ep = ep;
    }

    /** An address handle of the endpoint: where its datagrams go, a peer's queue pair. */
    static final class OfaAh implements AddressHandle {
        final OfaUdEp owner;
        final MemorySegment ah;
        final InetAddress ip;
        final int qpn;
        final int qkey;

        OfaAh(OfaUdEp owner, MemorySegment ah, InetAddress ip, int qpn, int qkey) {
            this.owner = owner;
            this.ah = ah;
            this.ip = ip;
            this.qpn = qpn;
            this.qkey = qkey;
        }

        @Override
        public SocketAddress address() {
            return new InetSocketAddress(ip, 0);
        }

        @Override
        public int qpn() {
            return qpn;
        }

        @Override
        public String toString() {
            return "AH " + ip.getHostAddress() + " qpn " + qpn;
        }
    }

    /** A handle from an rdma_cm {@code param.ud} copy ({@code ah_attr}, {@code qp_num}, {@code qkey}). */
    OfaAh fromCm(MemorySegment ud, InetAddress ip) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvAhAttr.S.size(), 8);
            MemorySegment.copy(ud, 0, attr, 0, IbvAhAttr.S.size());
            int qpn = ud.get(ValueLayout.JAVA_INT_UNALIGNED, 32);
            int qkey = ud.get(ValueLayout.JAVA_INT_UNALIGNED, 36);
            return add(attr, ip, qpn & 0xff_ffff, qkey);
        }
    }

    /** A handle to queue pair {@code qpn} at the IPv4 address {@code ip}. */
    OfaAh toAddress(InetAddress ip, int qpn) {
        for (OfaAh h : handles) {
            if (h.qpn == qpn && h.ip.equals(ip)) {
                return h;
            }
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvAhAttr.S.size(), 8);
            attr.fill((byte) 0);
            MemorySegment.copy(MemorySegment.ofArray(gidOf(ip)), 0, IbvAhAttr.DGID.slice(attr, 16), 0, 16);
            IbvAhAttr.SGID_INDEX.setU8(attr, sgidIndex());
            IbvAhAttr.HOP_LIMIT.setU8(attr, HOP_LIMIT);
            IbvAhAttr.IS_GLOBAL.setU8(attr, 1);
            IbvAhAttr.PORT_NUM.setU8(attr, ep.ia.device().port);
            return add(attr, ip, qpn, UdQueuePair.QKEY);
        }
    }

    /**
     * The sender of a received datagram: a handle the endpoint has for its queue pair, else one made
     * from the source address in the receive's first 40 bytes ({@code grh}: a GRH, or on RoCE v2 over
     * IPv4 the IP header in its last 20 bytes).
     */
    OfaAh sender(int srcQp, MemorySegment grh) {
        InetAddress ip = sourceOf(grh);
        for (OfaAh h : handles) {
            if (h.qpn == srcQp && (ip == null || h.ip.equals(ip))) {
                return h;
            }
        }
        return ip == null ? null : toAddress(ip, srcQp);
    }

    private static InetAddress sourceOf(MemorySegment grh) {
        byte[] g = grh.toArray(ValueLayout.JAVA_BYTE);
        try {
            if ((g[20] & 0xf0) == 0x40) { // an IPv4 header: its source address at 12
                return InetAddress.getByAddress(Arrays.copyOfRange(g, 32, 36));
            }
            byte[] sgid = Arrays.copyOfRange(g, 8, 24);
            if (isV4Mapped(sgid)) {
                return InetAddress.getByAddress(Arrays.copyOfRange(sgid, 12, 16));
            }
            return InetAddress.getByAddress(sgid);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private OfaAh add(MemorySegment attr, InetAddress ip, int qpn, int qkey) {
        MemorySegment ah;
        try {
            ah = Verbs.get().createAh(ep.pz.pd, attr);
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.NO_SUBTYPE, "ibv_create_ah", e);
        }
        OfaAh h = new OfaAh(ep, ah, ip, qpn, qkey);
        handles.add(h);
        return h;
    }

    /** Destroys every handle (the endpoint is freed). */
    void destroy() {
        for (OfaAh h : handles) {
            NativeErrors.quietly("ibv_destroy_ah", () -> Verbs.get().destroyAh(h.ah));
        }
        handles.clear();
    }

    private int sgidIndex() {
        if (sgidIndex < 0) {
            byte[] own = gidOf(ep.ia.inetAddress().getAddress());
            OfaDevice d = ep.ia.device();
            for (int i = 0; i < 256 && sgidIndex < 0; i++) {
                try {
                    if (Arrays.equals(own, Verbs.get().queryGid(d.context.pointer(), d.port, i))) {
                        sgidIndex = i;
                    }
                } catch (VerbsException e) {
                    break;
                }
            }
            if (sgidIndex < 0) {
                sgidIndex = 0;
            }
        }
        return sgidIndex;
    }

    /** The RoCE GID of an address: IPv4-mapped for IPv4. */
    static byte[] gidOf(InetAddress ip) {
        if (ip instanceof Inet4Address) {
            byte[] g = new byte[16];
            g[10] = (byte) 0xff;
            g[11] = (byte) 0xff;
            System.arraycopy(ip.getAddress(), 0, g, 12, 4);
            return g;
        }
        return ip.getAddress();
    }

    private static boolean isV4Mapped(byte[] gid) {
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
    }
}
