package org.jdapl.provider.ofi.fabric;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.jdapl.provider.ofi.fabric.FiCalls.MEM;
import static org.jdapl.provider.ofi.fabric.FiCalls.word;
import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * The part of the binding reliable-datagram endpoints ({@code FI_EP_RDM}) need beyond the MSG
 * path's: {@code fi_getinfo} hints for RDM, address vectors ({@code fi_av_open},
 * {@code fi_av_insert}), sends and receives with an explicit peer ({@code fi_send}, {@code fi_recv}),
 * an endpoint's raw name ({@code fi_getname}), and the readers of the ordering and inject attributes
 * the capability check uses. Each call reads its ops table as {@link FiCalls} does
 * ({@code FI_CHECK_OP}).
 */
public final class FiRdm {
    private FiRdm() {
    }

    /** {@code FI_EP_RDM}. */
    public static final int FI_EP_RDM = 3;
    /** {@code FI_ADDR_STR}: a formatted string address ({@code fi_shm://name}). */
    public static final int FI_ADDR_STR = 9;
    /** {@code FI_AV_TABLE}: the n-th address inserted is {@code fi_addr_t} n. */
    public static final int FI_AV_TABLE = 2;
    /** {@code FI_ORDER_SAR}, {@code FI_ORDER_SAW}, {@code FI_ORDER_SAS}. */
    public static final long FI_ORDER_SAR = 1L << 6;
    public static final long FI_ORDER_SAW = 1L << 7;
    public static final long FI_ORDER_SAS = 1L << 8;
    /** {@code FI_PROGRESS_MANUAL}. */
    public static final int FI_PROGRESS_MANUAL = 2;

    // fi_ops_domain.av_open, fi_av_attr, fid_av.ops, fi_ops_av.insert, fi_ops_msg.recv/send.
    static final long OPS_DOMAIN_AV_OPEN = 8;
    static final long AV_ATTR_SIZE = 48;
    static final long AV_ATTR_TYPE = 0;
    static final long AV_ATTR_COUNT = 8;
    static final long AV_OPS = 24;
    static final long OPS_AV_INSERT = 8;
    static final long OPS_MSG_RECV = 8;
    static final long OPS_MSG_SEND = 32;
    static final long DOMAIN_DATA_PROGRESS_OFF = 24;

    private static final Linker L = Linker.nativeLinker();
    private static final MethodHandle I_JJJJ = L.downcallHandle(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG));
    private static final MethodHandle I_JJJJJJ = L.downcallHandle(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle J_JJJJJJ = L.downcallHandle(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    /**
     * {@code fi_getinfo} for RDM endpoints of {@code provider} (null: any) with the capabilities the
     * DAT model needs ({@code FI_MSG | FI_RMA}), {@code FI_THREAD_SAFE} and the MR modes the DAT layer
     * handles; the caller frees the list. 0 if none. The ordering is not in the hints: it is read from
     * the answer ({@link #txOrder}) and the answer decides how it is enforced.
     */
    public static long query(String provider) {
        Fi fi = Fi.get();
        long hints = fi.dupinfo(0);
        try {
            MEM.set(ValueLayout.JAVA_LONG, hints + INFO_CAPS, Fi.FI_MSG | Fi.FI_RMA);
            MEM.set(ValueLayout.JAVA_INT, word(hints + INFO_EP_ATTR) + EP_TYPE, FI_EP_RDM);
            long dom = word(hints + INFO_DOMAIN_ATTR);
            MEM.set(ValueLayout.JAVA_INT, dom + DOMAIN_THREADING, Fi.FI_THREAD_SAFE);
            MEM.set(ValueLayout.JAVA_INT, dom + DOMAIN_MR_MODE, FiInfo.MR_MODES);
            if (provider != null) {
                MEM.set(ValueLayout.JAVA_LONG, word(hints + INFO_FABRIC_ATTR) + FABRIC_PROV_NAME, strdup(provider));
            }
            return fi.getinfo(null, null, 0, hints);
        } finally {
            fi.freeinfo(hints);
        }
    }

    /**
     * What {@code fi_getinfo} answers without the DAT model's capabilities, for the message that names
     * what is missing: the provider's RDM entry with nothing asked, or 0.
     */
    public static long queryBare(String provider) {
        Fi fi = Fi.get();
        long hints = fi.dupinfo(0);
        try {
            MEM.set(ValueLayout.JAVA_INT, word(hints + INFO_EP_ATTR) + EP_TYPE, FI_EP_RDM);
            MEM.set(ValueLayout.JAVA_INT, word(hints + INFO_DOMAIN_ATTR) + DOMAIN_MR_MODE, 0xffff);
            if (provider != null) {
                MEM.set(ValueLayout.JAVA_LONG, word(hints + INFO_FABRIC_ATTR) + FABRIC_PROV_NAME, strdup(provider));
            }
            return fi.getinfo(null, null, 0, hints);
        } catch (FiException e) {
            return 0;
        } finally {
            fi.freeinfo(hints);
        }
    }

    private static final MethodHandle STRDUP = L.downcallHandle(L.defaultLookup().find("strdup").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));

    private static long strdup(String s) {
        try (Arena a = Arena.ofConfined()) {
            return (long) STRDUP.invokeExact(a.allocateFrom(s));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code info->ep_attr->type}. */
    public static int epType(long info) {
        return MEM.get(ValueLayout.JAVA_INT, word(info + INFO_EP_ATTR) + EP_TYPE);
    }

    /** {@code info->addr_format}. */
    public static int addrFormat(long info) {
        return MEM.get(ValueLayout.JAVA_INT, info + INFO_ADDR_FORMAT);
    }

    /** {@code info->caps}. */
    public static long caps(long info) {
        return word(info + INFO_CAPS);
    }

    /** {@code info->tx_attr->msg_order}. */
    public static long txOrder(long info) {
        return word(word(info + INFO_TX_ATTR) + TX_MSG_ORDER);
    }

    /** Sets {@code info->tx_attr->msg_order} and {@code rx_attr->msg_order} (the same offset in both). */
    public static void setOrder(long info, long order) {
        MEM.set(ValueLayout.JAVA_LONG, word(info + INFO_TX_ATTR) + TX_MSG_ORDER, order);
        MEM.set(ValueLayout.JAVA_LONG, word(info + INFO_RX_ATTR) + TX_MSG_ORDER, order);
    }

    /** {@code info->tx_attr->inject_size}. */
    public static long injectSize(long info) {
        return word(word(info + INFO_TX_ATTR) + TX_INJECT_SIZE);
    }

    /** {@code info->domain_attr->data_progress}. */
    public static int dataProgress(long info) {
        return MEM.get(ValueLayout.JAVA_INT, word(info + INFO_DOMAIN_ATTR) + DOMAIN_DATA_PROGRESS_OFF);
    }

    /**
     * Replaces {@code info->src_addr} with {@code addr} (malloc'ed copy; null: none), so that an
     * endpoint made from the info takes that name (shm: the name of its region; tcp: the port).
     */
    public static void setSrcAddr(long info, byte[] addr) {
        long old = word(info + INFO_SRC_ADDR);
        long p = 0;
        if (addr != null) {
            p = malloc(addr.length);
            MemorySegment.copy(addr, 0, MEM, ValueLayout.JAVA_BYTE, p, addr.length);
        }
        MEM.set(ValueLayout.JAVA_LONG, info + INFO_SRC_ADDR, p);
        MEM.set(ValueLayout.JAVA_LONG, info + INFO_SRC_ADDRLEN, addr == null ? 0L : addr.length);
        if (old != 0) {
            free(old);
        }
    }

    private static final MethodHandle MALLOC = L.downcallHandle(L.defaultLookup().find("malloc").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
    private static final MethodHandle FREE = L.downcallHandle(L.defaultLookup().find("free").orElseThrow(),
            FunctionDescriptor.ofVoid(JAVA_LONG));

    private static long malloc(long n) {
        try {
            return (long) MALLOC.invokeExact(n);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private static void free(long p) {
        try {
            FREE.invokeExact(p);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Opens an RDM endpoint of {@code info} with an address vector of its own ({@code avCount}
     * entries), binds the receive CQ {@code rxCq} and the transmit CQ {@code txCq} (either 0: none;
     * the same CQ: bound once for both) and enables it: {ep, av}. What it opened is closed again if a
     * step fails.
     */
    public static long[] openEndpoint(long domain, long info, int avCount, long rxCq, long txCq) {
        long av = avOpen(domain, avCount);
        long ep = 0;
        try {
            ep = FiSignals.keeping(() -> FiCalls.endpoint(domain, info, 0));
            FiCalls.bind(ep, av, 0);
            if (rxCq != 0 && rxCq == txCq) {
                FiCalls.bind(ep, rxCq, Fi.FI_TRANSMIT | Fi.FI_RECV);
            } else {
                if (rxCq != 0) {
                    FiCalls.bind(ep, rxCq, Fi.FI_RECV);
                }
                if (txCq != 0) {
                    FiCalls.bind(ep, txCq, Fi.FI_TRANSMIT);
                }
            }
            FiCalls.enable(ep);
            return new long[] {ep, av};
        } catch (RuntimeException e) {
            for (long fid : new long[] {ep, av}) {
                try {
                    if (fid != 0) {
                        FiCalls.close(fid);
                    }
                } catch (FiException ignored) {
                    // the first failure is the one reported
                }
            }
            throw e;
        }
    }

    /** {@code fi_av_open(domain, {FI_AV_TABLE, count}, &av, NULL)}. */
    public static long avOpen(long domain, int count) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(AV_ATTR_SIZE, 8);
            attr.set(ValueLayout.JAVA_INT, AV_ATTR_TYPE, FI_AV_TABLE);
            attr.set(ValueLayout.JAVA_LONG, AV_ATTR_COUNT, count);
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) I_JJJJ.invokeExact(FiCalls.op(word(domain + DOMAIN_OPS), OPS_DOMAIN_AV_OPEN, "fi_av_open"),
                    domain, attr.address(), out.address(), 0L);
            FiException.check(rc, "fi_av_open");
            return out.get(JAVA_LONG, 0);
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_av_insert(av, addr, 1, &fi_addr, 0, NULL)}: the address's {@code fi_addr_t}. */
    public static long avInsert(long av, byte[] addr) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(Math.max(addr.length, 1) + 1L);
            MemorySegment.copy(addr, 0, buf, ValueLayout.JAVA_BYTE, 0, addr.length);
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) I_JJJJJJ.invokeExact(FiCalls.op(word(av + AV_OPS), OPS_AV_INSERT, "fi_av_insert"), av,
                    buf.address(), 1L, out.address(), 0L, 0L);
            if (rc != 1) {
                throw new FiException(rc < 0 ? rc : -22, "fi_av_insert");
            }
            return out.get(JAVA_LONG, 0);
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_getname(ep)}: the endpoint's address as the provider encodes it. */
    public static byte[] name(long ep) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sa = a.allocate(256, 8);
            MemorySegment len = a.allocate(8, 8);
            len.set(ValueLayout.JAVA_LONG, 0, 256);
            FiException.check(FiCalls.getname(ep, sa.address(), len.address()), "fi_getname");
            int n = (int) Math.min(256, len.get(ValueLayout.JAVA_LONG, 0));
            byte[] b = new byte[n];
            MemorySegment.copy(sa, ValueLayout.JAVA_BYTE, 0, b, 0, n);
            return b;
        }
    }

    /** {@code fi_send(ep, buf, len, desc, dest_addr, context)}; -FI_EAGAIN when the queue is full. */
    public static long send(long ep, long buf, long len, long desc, long dest, long context) {
        try {
            return (long) J_JJJJJJ.invokeExact(FiCalls.op(word(ep + EP_MSG), OPS_MSG_SEND, "fi_send"), ep, buf, len,
                    desc, dest, context);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_recv(ep, buf, len, desc, FI_ADDR_UNSPEC, context)}. */
    public static long recv(long ep, long buf, long len, long desc, long context) {
        try {
            return (long) J_JJJJJJ.invokeExact(FiCalls.op(word(ep + EP_MSG), OPS_MSG_RECV, "fi_recv"), ep, buf, len,
                    desc, -1L, context);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** A printable form of an address: the string of an {@code FI_ADDR_STR}, else hex. */
    public static String toString(byte[] addr) {
        int n = 0;
        while (n < addr.length && addr[n] != 0) {
            n++;
        }
        if (n > 0 && addr[0] >= 'a' && addr[0] <= 'z') {
            return new String(addr, 0, n, StandardCharsets.US_ASCII);
        }
        StringBuilder b = new StringBuilder();
        for (byte x : addr) {
            b.append(String.format("%02x", x));
        }
        return b.toString();
    }
}
