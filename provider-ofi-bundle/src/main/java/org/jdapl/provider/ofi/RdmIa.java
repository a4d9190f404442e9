package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.INFO_NEXT;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiInfo;
import org.jdapl.provider.ofi.fabric.FiRdm;

/**
 * What an IA over reliable-datagram endpoints ({@code FI_EP_RDM}: shm, {@code tcp;ofi_rxm}, efa, ...)
 * adds to the MSG path's IA: the capability check and selection of the {@code fi_info}
 * ({@link #select}), the endpoint names (a PSP's name follows from its connection qualifier, so that
 * a connect finds it; other endpoints take a unique or ephemeral one), the ordering chosen from the
 * provider's {@code msg_order}, and the control endpoints it polls (with the keepalive) from the IA's
 * progress and from every waiter on a connection EVD. The protocol is RDM_PROTOCOL.md.
 *
 * <p>Behaviours: OBJ_01.
 */
final class RdmIa implements IntSupplier {
    /** A keepalive goes to the peer after this much silence on the control endpoint. */
    static final long KEEPALIVE_INTERVAL_NANOS = 1_000_000_000L;
    /** A connection whose peer is silent this long is BROKEN (peer death, a cut path). */
    static final long KEEPALIVE_BOUND_NANOS = Long.getLong("jdapl.ofi.rdm.keepaliveMillis", 6000) * 1_000_000L;
    /** The ordering the DAT model needs of a provider's transmit side: a send after a write or read. */
    static final long DAT_ORDER = FiRdm.FI_ORDER_SAW | FiRdm.FI_ORDER_SAR | FiRdm.FI_ORDER_SAS;

    /** The room after every shm receive: shm's inject size, the largest message it moves by SAR when CMA is available ({@link EpData}). */
    static final long OVERFLOW = 4096;

    private static final AtomicLong NAMES = new AtomicLong();

    final OfiIa ia;
    /** Addresses are {@code FI_ADDR_STR} names (shm), not socket addresses. */
    final boolean named;
    /** The provider orders a send after an RDMA Write or Read ({@code msg_order}); else delivery-complete only. */
    final boolean ordered;
    /**
     * The provider is rxm ({@code <core>;ofi_rxm}). Its LMRs are registered without
     * {@code FI_SEND}/{@code FI_RECV} where it does not ask {@code FI_MR_LOCAL} ({@link OfiLmr#access}).
     * Like every RDM connection, its sends leave with receive credits ({@link MsgCredits}).
     */
    final boolean rxm;
    final List<RdmChannel> channels = new CopyOnWriteArrayList<>();
    /** The open connections by their connection id. */
    final Map<Long, RdmConnection> connections = new ConcurrentHashMap<>();
    /** shm: data endpoints of this IA whose close waits for their peer of this process ({@link RdmLocal#closeAfter}); each closes once. */
    final List<Runnable> heldCloses = new CopyOnWriteArrayList<>();
    private RdmHub hub;
    private boolean closed;

    RdmIa(OfiIa ia) {
        this.ia = ia;
        this.named = FiRdm.addrFormat(ia.info) == FiRdm.FI_ADDR_STR;
        this.ordered = (FiRdm.txOrder(ia.info) & DAT_ORDER) == DAT_ORDER;
        String p = FiInfo.providerName(ia.info);
        this.rxm = p != null && p.contains("ofi_rxm");
    }

    /** Whether {@code info} is of an RDM endpoint. */
    static boolean isRdm(long info) {
        return FiRdm.epType(info) == FiRdm.FI_EP_RDM;
    }

    /** The IA's address: the domain's IPv4 source address, or loopback for a host-local fabric (shm). */
    static InetSocketAddress iaAddress(long info) {
        InetSocketAddress src = FiInfo.srcAddr(info);
        return new InetSocketAddress(src != null ? src.getAddress() : InetAddress.getLoopbackAddress(), 0);
    }

    /**
     * Whether {@code a} is an address of this host (loopback, the wildcard, or an interface's): a
     * host-local fabric (shm) reaches no other host, so a connect to any other address is UNREACHABLE.
     */
    static boolean thisHost(InetAddress a) {
        if (a.isLoopbackAddress() || a.isAnyLocalAddress()) {
            return true;
        }
        try {
            return java.net.NetworkInterface.getByInetAddress(a) != null;
        } catch (java.net.SocketException e) {
            return false;
        }
    }

    /** The ordering in words, for the IA's attributes. */
    String ordering() {
        return ordered ? "msg_order SAW|SAR|SAS" : "delivery-complete (the provider offers msg_order "
                + Long.toHexString(FiRdm.txOrder(ia.info)) + ")";
    }

    /**
     * A copy of the IA's {@code fi_info} for one endpoint named {@code src} (null: a unique shm name or
     * an ephemeral port), with the ordering; the caller frees it. No {@code FI_DELIVERY_COMPLETE} among
     * the endpoint's defaults: a data endpoint's sends leave on receive credits and complete once the
     * provider has them ({@link MsgCredits}), its RDMA Writes ask delivery-complete themselves
     * ({@link EpPosts}).
     */
    long endpointInfo(byte[] src) {
        long info = Fi.get().dupinfo(ia.info);
        if (named) {
            FiRdm.setSrcAddr(info, src != null ? src : shmName("jdapl_" + ProcessHandle.current().pid() + "_"
                    + NAMES.incrementAndGet()));
        } else {
            FiRdm.setSrcAddr(info, src != null ? src : sockaddr(new InetSocketAddress(ia.address.getAddress(), 0)));
        }
        if (ordered) {
            FiRdm.setOrder(info, DAT_ORDER);
        }
        return info;
    }

    /** The address of the PSP on {@code port} of the IA at {@code ip} on a socket-address provider (shm: {@link RdmListener#pspName}). */
    byte[] pspAddress(InetAddress ip, int port) {
        return sockaddr(new InetSocketAddress(ip, port));
    }

    static byte[] shmName(String name) {
        byte[] s = name.getBytes(StandardCharsets.US_ASCII);
        byte[] z = new byte[s.length + 1];
        System.arraycopy(s, 0, z, 0, s.length);
        return z;
    }

    static byte[] sockaddr(InetSocketAddress a) {
        java.lang.foreign.MemorySegment m = java.lang.foreign.Arena.ofAuto().allocate(16, 8);
        FiInfo.putSockaddr(m.address(), a);
        return m.toArray(ValueLayout.JAVA_BYTE);
    }

    /** The port a socket-address name carries (0 for a shm name). */
    int portOf(byte[] name) {
        if (named || name.length < 4) {
            return 0;
        }
        return ((name[2] & 0xff) << 8) | (name[3] & 0xff);
    }

    /**
     * Retries a post that a socket-address RDM provider (rxm) answered {@code -FI_EAGAIN} (while its
     * connection to the peer is set up, or a queue is full), driving this side's progress (the EVD's
     * CQ) between tries, for up to {@link #RETRY_NANOS}; the last return code. The connection's setup
     * needs the peer's progress too, which a loaded host may not run that soon: a request still
     * refused then waits in order for the IA's progress ({@link EpData}), as shm's do.
     */
    long retry(OfiEvd evd, java.util.function.LongSupplier post) {
        long end = System.nanoTime() + RETRY_NANOS;
        long rc;
        do {
            evd.pollCq();
            Thread.onSpinWait();
            rc = post.getAsLong();
        } while (rc == -Fi.FI_EAGAIN && System.nanoTime() - end < 0);
        return rc;
    }

    static final long RETRY_NANOS = 200_000_000L;

    /** Polls the control endpoints and runs the keepalive; what it did. */
    @Override
    public int getAsInt() {
        int n = 0;
        for (RdmChannel c : channels) {
            n += c.poll();
        }
        long now = System.nanoTime();
        for (RdmConnection c : connections.values()) {
            c.tick(now);
        }
        return n;
    }

    /** Closes the data endpoints whose close waits for their peer of this process ({@link RdmLocal#closeAfter}). */
    void closeHeld() {
        for (Runnable r : heldCloses) {
            r.run();
        }
        heldCloses.clear();
    }

    /** The IA's hub, opened at the first connect or accept. */
    synchronized RdmHub hub() {
        if (closed) {
            throw new DatException(DatReturnType.INVALID_STATE, "the IA is closed");
        }
        if (hub == null) {
            hub = new RdmHub(this);
        }
        return hub;
    }

    /**
     * Closes the endpoints of any connection left (an EP whose free failed), the hub and any control
     * endpoint left (the IA closes, its objects are freed): every shm region of the IA goes with them
     * ({@link RdmLocal}).
     */
    synchronized void close() {
        closed = true;
        for (RdmConnection c : connections.values()) {
            c.closeWithIa();
        }
        closeHeld();
        if (hub != null) {
            hub.close();
            hub = null;
        }
        for (RdmChannel c : channels) {
            c.close();
        }
    }

    /**
     * The {@code fi_info} (a copy of one entry, the caller's) of the RDM provider and domain
     * {@code params} name, asked with what the DAT model needs: {@code FI_MSG | FI_RMA},
     * {@code FI_THREAD_SAFE}, the MR modes jdapl serves; a socket-address provider also an IPv4 source
     * address. Fails naming the capability the provider lacks.
     */
    static long select(OfiIaParams params) {
        long list;
        try {
            list = FiRdm.query(params.provider());
        } catch (FiException e) {
            list = 0;
        }
        try {
            for (long i = list; i != 0; i = FiCalls.word(i + INFO_NEXT)) {
                boolean str = FiRdm.addrFormat(i) == FiRdm.FI_ADDR_STR;
                if (FiRdm.epType(i) == FiRdm.FI_EP_RDM && (str || FiInfo.srcAddr(i) != null)
                        && (params.domain() == null || params.domain().equals(FiInfo.domainName(i)))) {
                    long next = FiCalls.word(i + INFO_NEXT);
                    FiCalls.MEM.set(ValueLayout.JAVA_LONG, i + INFO_NEXT, 0L);
                    long copy = Fi.get().dupinfo(i);
                    FiCalls.MEM.set(ValueLayout.JAVA_LONG, i + INFO_NEXT, next);
                    return copy;
                }
            }
        } finally {
            if (list != 0) {
                Fi.get().freeinfo(list);
            }
        }
        throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE, missing(params));
    }

    /** Why {@link #select} finds nothing: the capability the provider lacks, or that it has no RDM endpoint. */
    static String missing(OfiIaParams params) {
        long bare = FiRdm.queryBare(params.provider());
        if (bare == 0) {
            return "libfabric offers no FI_EP_MSG or FI_EP_RDM endpoint of provider " + params.provider()
                    + " (fi_info -p '" + params.provider() + "' lists what there is)";
        }
        try {
            List<String> lacks = new ArrayList<>();
            boolean domainSeen = false;
            for (long i = bare; i != 0; i = FiCalls.word(i + INFO_NEXT)) {
                if (params.domain() != null && !params.domain().equals(FiInfo.domainName(i))) {
                    continue;
                }
                domainSeen = true;
                long caps = FiRdm.caps(i);
                if ((caps & Fi.FI_MSG) == 0) {
                    lacks.add("FI_MSG (sends and receives)");
                }
                if ((caps & Fi.FI_RMA) == 0) {
                    lacks.add("FI_RMA (RDMA Read and Write)");
                }
                int extra = FiInfo.mrMode(i) & ~FiInfo.MR_MODES & ~3;
                if (extra != 0) {
                    lacks.add("an MR mode jdapl serves (the provider requires mr_mode 0x" + Integer.toHexString(extra)
                            + "; jdapl serves FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY)");
                }
                if (FiRdm.addrFormat(i) != FiRdm.FI_ADDR_STR && FiInfo.srcAddr(i) == null) {
                    lacks.add("an IPv4 source address (FI_SOCKADDR_IN)");
                }
            }
            if (!domainSeen) {
                return "libfabric provider " + params.provider() + " has no FI_EP_RDM domain " + params.domain();
            }
            return "libfabric provider " + params.provider() + " cannot serve a DAT IA over FI_EP_RDM: it lacks "
                    + (lacks.isEmpty() ? "FI_THREAD_SAFE" : String.join(", ", lacks.stream().distinct().toList()));
        } finally {
            Fi.get().freeinfo(bare);
        }
    }

    /** The IA names of the RDM fabrics libfabric offers here: {@code ofi-v2-shm}, {@code ofi-v2-tcp-rxm-lo}. */
    static List<IaSpec> defaultIas() {
        List<IaSpec> out = new ArrayList<>();
        for (String[] c : new String[][] {{"ofi-v2-shm", "shm"}, {"ofi-v2-tcp-rxm-lo", "tcp;ofi_rxm lo"}}) {
            try {
                Fi.get().freeinfo(select(OfiIaParams.parse(c[1])));
                out.add(new IaSpec(c[0], c[1], "", true, "ofi provider: libfabric " + c[1] + " (FI_EP_RDM)"));
            } catch (DatException | FiException e) {
                // not offered here
            }
        }
        return out;
    }
}
