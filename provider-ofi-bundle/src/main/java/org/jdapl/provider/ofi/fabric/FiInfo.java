package org.jdapl.provider.ofi.fabric;

import static org.jdapl.provider.ofi.fabric.FiCalls.MEM;
import static org.jdapl.provider.ofi.fabric.FiCalls.i32;
import static org.jdapl.provider.ofi.fabric.FiCalls.word;
import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code fi_getinfo} for connection-oriented endpoints: the hints the provider asks with
 * ({@code FI_EP_MSG}, {@code FI_MSG | FI_RMA}, IPv4 addresses, {@code FI_THREAD_SAFE}, the MR modes it
 * handles: {@code FI_MR_LOCAL}, {@code FI_MR_VIRT_ADDR}, {@code FI_MR_ALLOCATED}, {@code FI_MR_PROV_KEY}),
 * and readers of an {@code fi_info}'s fields.
 */
public final class FiInfo {
    private FiInfo() {
    }

    /** The MR modes the DAT layer handles. */
    public static final int MR_MODES = Fi.FI_MR_LOCAL | Fi.FI_MR_VIRT_ADDR | Fi.FI_MR_ALLOCATED | Fi.FI_MR_PROV_KEY;

    private static final MethodHandle STRDUP = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("strdup").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));

    /** A provider and domain that offer MSG endpoints. */
    public record Domain(String provider, String domain, String fabric) {
    }

    private static long strdup(String s) {
        try (Arena a = Arena.ofConfined()) {
            return (long) STRDUP.invokeExact(a.allocateFrom(s));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code fi_getinfo} with the provider's hints, narrowed to {@code provider} (null: any) and
     * {@code domain} (null: any); the caller frees the list with {@link Fi#freeinfo}. 0 if none.
     */
    public static long query(String provider, String domain) {
        Fi fi = Fi.get();
        long hints = fi.dupinfo(0);
        try {
            MEM.set(ValueLayout.JAVA_LONG, hints + INFO_CAPS, Fi.FI_MSG | Fi.FI_RMA);
            MEM.set(ValueLayout.JAVA_INT, hints + INFO_ADDR_FORMAT, Fi.FI_SOCKADDR_IN);
            MEM.set(ValueLayout.JAVA_INT, word(hints + INFO_EP_ATTR) + EP_TYPE, Fi.FI_EP_MSG);
            long dom = word(hints + INFO_DOMAIN_ATTR);
            MEM.set(ValueLayout.JAVA_INT, dom + DOMAIN_THREADING, Fi.FI_THREAD_SAFE);
            MEM.set(ValueLayout.JAVA_INT, dom + DOMAIN_MR_MODE, MR_MODES);
            if (domain != null) {
                MEM.set(ValueLayout.JAVA_LONG, dom + DOMAIN_NAME, strdup(domain));
            }
            if (provider != null) {
                MEM.set(ValueLayout.JAVA_LONG, word(hints + INFO_FABRIC_ATTR) + FABRIC_PROV_NAME, strdup(provider));
            }
            return fi.getinfo(null, null, 0, hints);
        } finally {
            fi.freeinfo(hints);
        }
    }

    /**
     * The entry of {@code list} for {@code domain} (null: any) with an IPv4 source address, or 0.
     * Some providers (tcp) do not narrow {@code fi_getinfo} by the hints' domain name, so the list is
     * searched here.
     */
    public static long pick(long list, String domain) {
        for (long i = list; i != 0; i = word(i + INFO_NEXT)) {
            if (srcAddr(i) != null && (domain == null || domain.equals(domainName(i)))) {
                return i;
            }
        }
        return 0;
    }

    /** Every provider/domain pair that offers MSG endpoints over IPv4. */
    public static List<Domain> msgDomains() {
        List<Domain> out = new ArrayList<>();
        long head = query(null, null);
        try {
            for (long i = head; i != 0; i = word(i + INFO_NEXT)) {
                Domain d = new Domain(providerName(i), domainName(i), fabricName(i));
                if (!out.contains(d)) {
                    out.add(d);
                }
            }
        } finally {
            Fi.get().freeinfo(head);
        }
        return out;
    }

    private static String str(long p) {
        return p == 0 ? "" : MemorySegment.ofAddress(p).reinterpret(4096).getString(0, StandardCharsets.UTF_8);
    }

    /** {@code info->fabric_attr->prov_name}. */
    public static String providerName(long info) {
        return str(word(word(info + INFO_FABRIC_ATTR) + FABRIC_PROV_NAME));
    }

    /** {@code info->fabric_attr->name}. */
    public static String fabricName(long info) {
        return str(word(word(info + INFO_FABRIC_ATTR) + FABRIC_NAME));
    }

    /** {@code info->domain_attr->name}. */
    public static String domainName(long info) {
        return str(word(word(info + INFO_DOMAIN_ATTR) + DOMAIN_NAME));
    }

    /** {@code info->domain_attr->mr_mode}. */
    public static int mrMode(long info) {
        return i32(word(info + INFO_DOMAIN_ATTR) + DOMAIN_MR_MODE);
    }

    /** A {@code size_t} of one of the info's attribute structs. */
    public static long attr(long info, long attrPointerOffset, long memberOffset) {
        return word(word(info + attrPointerOffset) + memberOffset);
    }

    /**
     * Asks for {@code FI_DELIVERY_COMPLETE} on the endpoints made from {@code info}: a send or RDMA
     * Write completes only once the data is placed at the peer (a send in a posted receive), as DAT's
     * completion of a request DTO means; the default ({@code FI_TRANSMIT_COMPLETE} or less) would
     * complete a send the peer has no receive for, and an RDMA Write before its bytes are there.
     * Not on libfabric's verbs provider, which offers no such flag ({@code VERBS_TX_OP_FLAGS}: an
     * endpoint asking for it fails {@code FI_ENODATA} in {@code ofi_check_tx_attr}) and needs none: a
     * request on an RC queue pair completes on the responder's acknowledgement, which comes once an
     * RDMA Write's bytes are placed and a send is in a posted receive (without one the responder
     * answers RNR and the requester retries).
     */
    public static void deliveryComplete(long info) {
        if (deliveryCompleteFlag(info) == 0) {
            return;
        }
        long tx = word(info + INFO_TX_ATTR);
        MEM.set(ValueLayout.JAVA_LONG, tx + TX_OP_FLAGS, word(tx + TX_OP_FLAGS) | Fi.FI_DELIVERY_COMPLETE);
    }

    /**
     * The flag a request that must complete only once its data is placed at the peer names in its
     * own flags ({@code fi_sendmsg}, {@code fi_writemsg}): {@code FI_DELIVERY_COMPLETE}, 0 on verbs
     * ({@link #deliveryComplete}).
     */
    public static long deliveryCompleteFlag(long info) {
        return "verbs".equals(providerName(info)) ? 0 : Fi.FI_DELIVERY_COMPLETE;
    }

    /**
     * A copy of {@code info} ({@code fi_dupinfo}) whose {@code dest_addr} is the 16-byte sockaddr_in
     * at {@code sockaddr} (memory of the caller's, which must outlive the copy); free it with
     * {@link #freeWithDest}. libfabric's verbs provider resolves the route of an active endpoint in
     * {@code fi_endpoint} ({@code vrb_create_ep}: {@code rdma_resolve_addr} to {@code info->dest_addr}),
     * so the peer's address must be in the info the endpoint is made from.
     */
    public static long withDest(long info, long sockaddr) {
        long copy = Fi.get().dupinfo(info);
        MEM.set(ValueLayout.JAVA_LONG, copy + INFO_DEST_ADDR, sockaddr);
        MEM.set(ValueLayout.JAVA_LONG, copy + INFO_DEST_ADDRLEN, 16L);
        return copy;
    }

    /** Frees a copy of {@link #withDest} (its {@code dest_addr} is the caller's, not libfabric's). */
    public static void freeWithDest(long copy) {
        MEM.set(ValueLayout.JAVA_LONG, copy + INFO_DEST_ADDR, 0L);
        MEM.set(ValueLayout.JAVA_LONG, copy + INFO_DEST_ADDRLEN, 0L);
        Fi.get().freeinfo(copy);
    }

    /** {@code info->src_addr} as a socket address, or null if it is not a sockaddr_in. */
    public static InetSocketAddress srcAddr(long info) {
        return sockaddr(word(info + INFO_SRC_ADDR), word(info + INFO_SRC_ADDRLEN));
    }

    /** {@code info->dest_addr} as a socket address, or null. */
    public static InetSocketAddress destAddr(long info) {
        return sockaddr(word(info + INFO_DEST_ADDR), word(info + INFO_DEST_ADDRLEN));
    }

    /** A {@code struct sockaddr_in} at {@code addr} (AF_INET only). */
    public static InetSocketAddress sockaddr(long addr, long len) {
        if (addr == 0 || len < 16 || (MEM.get(ValueLayout.JAVA_SHORT, addr) & 0xffff) != 2) {
            return null;
        }
        int port = ((MEM.get(ValueLayout.JAVA_BYTE, addr + 2) & 0xff) << 8) | (MEM.get(ValueLayout.JAVA_BYTE, addr + 3) & 0xff);
        byte[] ip = new byte[4];
        MemorySegment.copy(MEM, ValueLayout.JAVA_BYTE, addr + 4, ip, 0, 4);
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), port);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** Writes {@code a} as a {@code struct sockaddr_in} (16 bytes) at {@code addr}. */
    public static void putSockaddr(long addr, InetSocketAddress a) {
        MEM.asSlice(addr, 16).fill((byte) 0);
        MEM.set(ValueLayout.JAVA_SHORT, addr, (short) 2);
        MEM.set(ValueLayout.JAVA_BYTE, addr + 2, (byte) (a.getPort() >>> 8));
        MEM.set(ValueLayout.JAVA_BYTE, addr + 3, (byte) a.getPort());
        byte[] ip = a.getAddress().getAddress();
        MemorySegment.copy(ip, 0, MEM, ValueLayout.JAVA_BYTE, addr + 4, 4);
    }
}
