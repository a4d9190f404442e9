package org.jdapl.provider.ofi.fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * libfabric's exported functions ({@code fi_getinfo}, {@code fi_freeinfo}, {@code fi_dupinfo},
 * {@code fi_fabric}, {@code fi_strerror}, {@code fi_version}) and the constants of
 * {@code FI_VERSION(1,17)}, the one API version the layouts of {@link FiLayouts} are built for.
 * {@code fi_getinfo} and {@code fi_fabric} are symbol-versioned ({@code fi_getinfo@@FABRIC_1.3},
 * {@code fi_fabric@@FABRIC_1.1}, {@code fi_freeinfo@@FABRIC_1.3}: {@code objdump -T}); a name lookup
 * ({@code dlsym}) finds the default version, the one a C program built against the headers links.
 * The library ({@code libfabric.so.1}) is loaded on first use; without it {@link #unavailableReason}
 * says why.
 */
public final class Fi {
    private static final Logger LOG = LoggerFactory.getLogger(Fi.class);

    /** {@code FI_VERSION(1, 17)}: the API version the layouts are built for and fi_getinfo is asked for. */
    public static final int API_VERSION = (1 << 16) | 17;

    // fabric.h capability and access bits.
    public static final long FI_MSG = 1L << 1;
    public static final long FI_RMA = 1L << 2;
    public static final long FI_READ = 1L << 8;
    public static final long FI_WRITE = 1L << 9;
    public static final long FI_RECV = 1L << 10;
    public static final long FI_SEND = 1L << 11;
    public static final long FI_REMOTE_READ = 1L << 12;
    public static final long FI_REMOTE_WRITE = 1L << 13;
    public static final long FI_REMOTE_CQ_DATA = 1L << 17;
    public static final long FI_SOURCE = 1L << 57;
    public static final long FI_TRANSMIT = FI_SEND;
    // enum fi_ep_type, addr formats, mr modes, waits, progress
    public static final int FI_EP_MSG = 1;
    public static final int FI_SOCKADDR_IN = 2;
    public static final int FI_MR_LOCAL = 1 << 2;
    public static final int FI_MR_VIRT_ADDR = 1 << 4;
    public static final int FI_MR_ALLOCATED = 1 << 5;
    public static final int FI_MR_PROV_KEY = 1 << 6;
    public static final int FI_MR_ENDPOINT = 1 << 9;
    public static final int FI_THREAD_SAFE = 1;
    public static final int FI_WAIT_NONE = 0;
    public static final int FI_WAIT_UNSPEC = 1;
    public static final int FI_WAIT_FD = 3;
    public static final int FI_CQ_FORMAT_DATA = 3;
    // fi_eq.h events
    public static final int FI_NOTIFY = 0;
    public static final int FI_CONNREQ = 1;
    public static final int FI_CONNECTED = 2;
    public static final int FI_SHUTDOWN = 3;
    // fi_control commands, getopt
    public static final int FI_GETWAIT = 5;
    public static final int FI_ENABLE = 6;
    public static final int FI_OPT_ENDPOINT = 0;
    public static final int FI_OPT_CM_DATA_SIZE = 1;
    // fid classes
    public static final int FI_CLASS_EP = 3;
    public static final int FI_CLASS_PEP = 9;
    // completion flags
    public static final long FI_COMPLETION = 1L << 24;
    /** A CQ bound with it reports only the operations posted with {@link #FI_COMPLETION}, and every error. */
    public static final long FI_SELECTIVE_COMPLETION = 1L << 59;
    public static final long FI_DELIVERY_COMPLETE = 1L << 28;
    // errno values (fi_errno.h equals errno where one exists)
    public static final int FI_EAGAIN = 11;
    public static final int FI_EAVAIL = 259;
    public static final int FI_ECANCELED = 125;

    private static final Linker LINKER = Linker.nativeLinker();
    /** The library loaded: {@code libfabric.so.1}, or {@code -Djdapl.ofi.library}. */
    static final String LIBRARY = System.getProperty("jdapl.ofi.library", "libfabric.so.1");
    private static volatile Fi instance;
    private static volatile String unavailable;

    private final MethodHandle getinfo;
    private final MethodHandle freeinfo;
    private final MethodHandle dupinfo;
    private final MethodHandle fabric;
    private final MethodHandle strerror;
    private final MethodHandle version;

    private Fi(SymbolLookup lib) {
        getinfo = fn(lib, "fi_getinfo", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        freeinfo = fn(lib, "fi_freeinfo", FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG));
        dupinfo = fn(lib, "fi_dupinfo", FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        fabric = fn(lib, "fi_fabric", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        strerror = fn(lib, "fi_strerror", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        version = fn(lib, "fi_version", FunctionDescriptor.of(ValueLayout.JAVA_INT));
    }

    private static MethodHandle fn(SymbolLookup lib, String name, FunctionDescriptor d) {
        MemorySegment sym = lib.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libfabric lacks " + name));
        return LINKER.downcallHandle(sym, d);
    }

    /** The loaded library; throws {@link FiException} if it cannot be loaded. */
    public static Fi get() {
        Fi f = instance;
        if (f != null) {
            return f;
        }
        synchronized (Fi.class) {
            if (instance == null && unavailable == null) {
                try {
                    keepJvmSignalHandlers();
                    instance = new Fi(SymbolLookup.libraryLookup(LIBRARY, Arena.global()));
                    int v = instance.version();
                    LOG.debug("libfabric {}.{} loaded", v >>> 16, v & 0xffff);
                } catch (Throwable e) {
                    unavailable = LIBRARY + " cannot be loaded (" + e.getMessage()
                            + "); install libfabric1 (scripts/ofi/install-host-packages.sh runtime)";
                }
            }
            if (instance == null) {
                throw new FiException(-38, unavailable);
            }
            return instance;
        }
    }

    /**
     * Debian's libfabric links libpsm2 and libpsm_infinipath (its psm2 and psm providers); their
     * constructors replace the process's SIGSEGV, SIGBUS and SIGILL handlers with a backtrace writer
     * (the {@code *.btr} files) when the library is loaded, unless {@code HFI_NO_BACKTRACE} /
     * {@code IPATH_NO_BACKTRACE} is set. The JVM takes those signals in normal operation (implicit
     * null checks, safepoint polls), so with the handler replaced the first of them kills the JVM.
     * The variables are set (unless the environment already sets them) before the library is loaded.
     *
     * <p>libfabric's registration cache is switched off ({@code FI_MR_CACHE_MAX_COUNT=0}, whatever
     * the environment says; read once, when the library initializes): with it, the verbs provider's
     * {@code fi_mr_reg} registers a cached region with every remote right
     * ({@code vrb_mr_cache_add_region}: {@code IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
     * IBV_ACCESS_REMOTE_READ}) and {@code fi_close} of the region leaves it registered, so a peer
     * could write to an LMR without remote write privilege, or to a freed one (LMR_05, LMR_06: the
     * write completed SUCCESS on rxe). Without the cache ({@code ofi_mr_cache_init} fails
     * {@code -FI_ENOSPC}, "MR caching disabled") an LMR is registered with its own rights and
     * deregistered when it is freed.
     *
     * <p>rxm's endpoints are sized for a few endpoints per process with many peers: over tcp it shares
     * one receive context per endpoint ({@code FI_OFI_RXM_USE_SRX} defaults to 1 there) and fills it
     * with buffers from a pool that grows 1024 buffers of 16 KiB at a time, about 70 MB of resident
     * memory per {@code tcp;ofi_rxm} endpoint before any message. A DAT EP over RDM owns two endpoints
     * of one peer each (RDM_PROTOCOL.md), so 300 EPs took the JVM past 20 GB. Unless the environment
     * sets them, {@code FI_OFI_RXM_USE_SRX=0} (receive buffers per connection: 1.4 MB per endpoint
     * with none) and {@code FI_OFI_RXM_BUFFER_SIZE=4096} (the eager size; larger messages go by
     * rxm's rendezvous; 6 MB per connected endpoint) are set.
     *
     * <p>rxm also opens for each of its endpoints a core CQ of (128 receives + 128 sends) x
     * {@code FI_UNIVERSE_SIZE} entries (65536 with Debian's libfabric 1.17 and no universe set),
     * sized for an endpoint talking to every process of a job. Over verbs that is a device CQ: larger than Soft-RoCE's
     * {@code max_cqe} (32767; {@code fi_enable} fails {@code EINVAL}), and with a universe of 64 still
     * 4 MiB of kernel memory per endpoint on rxe (its CQ rounds up to a power of two of 128-byte
     * entries): 2.4 GB for the kit's 300 EPs. A DAT EP's endpoints each have one peer, an IA's hub
     * and a PSP one per remote IA, so unless the environment sets it {@code FI_UNIVERSE_SIZE} is
     * {@link #UNIVERSE_SIZE} (8): 2048 entries, 512 KiB per endpoint on rxe; a hub or a PSP holds
     * the completions of up to 2048 control messages between two reads of its progress.
     */
    private static void keepJvmSignalHandlers() throws Throwable {
        String env = System.getenv("FI_UNIVERSE_SIZE");
        universeSize = env != null ? env : Integer.toString(UNIVERSE_SIZE);
        MethodHandle setenv = LINKER.downcallHandle(LINKER.defaultLookup().find("setenv").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        try (Arena a = Arena.ofConfined()) {
            for (String v : new String[] {"HFI_NO_BACKTRACE", "IPATH_NO_BACKTRACE"}) {
                int rc = (int) setenv.invokeExact(a.allocateFrom(v), a.allocateFrom("1"), 0);
                if (rc != 0) {
                    LOG.warn("setenv {} failed", v);
                }
            }
            for (String[] v : new String[][] {{"FI_OFI_RXM_USE_SRX", "0"}, {"FI_OFI_RXM_BUFFER_SIZE", "4096"},
                    {"FI_UNIVERSE_SIZE", Integer.toString(UNIVERSE_SIZE)}}) {
                if ((int) setenv.invokeExact(a.allocateFrom(v[0]), a.allocateFrom(v[1]), 0) != 0) {
                    LOG.warn("setenv {} failed", v[0]);
                }
            }
            if ((int) setenv.invokeExact(a.allocateFrom("FI_MR_CACHE_MAX_COUNT"), a.allocateFrom("0"), 1) != 0) {
                LOG.warn("setenv FI_MR_CACHE_MAX_COUNT failed");
            }
        }
    }

    /** The universe size jdapl sets for libfabric unless the environment sets one ({@link #keepJvmSignalHandlers}). */
    public static final int UNIVERSE_SIZE = 8;
    private static volatile String universeSize;

    /** {@code FI_UNIVERSE_SIZE} as libfabric reads it: the environment's, or {@link #UNIVERSE_SIZE}. */
    public static String universeSize() {
        return universeSize;
    }

    /** Why libfabric cannot be used, or null if it loads. */
    public static String unavailableReason() {
        try {
            get();
            return null;
        } catch (FiException e) {
            return unavailable;
        }
    }

    static boolean unavailableReasonQuiet() {
        return instance == null;
    }

    /** {@code fi_version()}: the library's API version. */
    public int version() {
        try {
            return (int) version.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code fi_getinfo(FI_VERSION(1,17), node, service, flags, hints, &info)}.
     *
     * @return the list's head (free with {@link #freeinfo}), or 0 when nothing matches (-FI_ENODATA)
     */
    public long getinfo(String node, String service, long flags, long hints) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.JAVA_LONG);
            int rc = (int) getinfo.invokeExact(API_VERSION, cstr(a, node), cstr(a, service), flags,
                    MemorySegment.ofAddress(hints), out);
            if (rc == -61) {
                return 0;
            }
            FiException.check(rc, "fi_getinfo");
            return out.get(ValueLayout.JAVA_LONG, 0);
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private static MemorySegment cstr(Arena a, String s) {
        return s == null ? MemorySegment.NULL : a.allocateFrom(s);
    }

    /** {@code fi_freeinfo(info)}; 0 is ignored. */
    public void freeinfo(long info) {
        if (info == 0) {
            return;
        }
        try {
            freeinfo.invokeExact(info);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_dupinfo(info)}: a copy (with hints zeroed by {@code fi_allocinfo} when info is 0). */
    public long dupinfo(long info) {
        try {
            long r = (long) dupinfo.invokeExact(info);
            if (r == 0) {
                throw new FiException(-12, "fi_dupinfo");
            }
            return r;
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_fabric(attr, &fabric, context)}. */
    public long fabric(long fabricAttr, long context) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.JAVA_LONG);
            int rc = (int) fabric.invokeExact(fabricAttr, out, context);
            FiException.check(rc, "fi_fabric");
            return out.get(ValueLayout.JAVA_LONG, 0);
        } catch (FiException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_strerror(errnum)}. */
    public String strerror(int errnum) {
        try {
            MemorySegment s = (MemorySegment) strerror.invokeExact(errnum);
            return s.equals(MemorySegment.NULL) ? "error " + errnum : s.reinterpret(1024).getString(0, StandardCharsets.UTF_8);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
