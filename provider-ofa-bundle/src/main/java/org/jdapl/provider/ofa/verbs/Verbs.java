package org.jdapl.provider.ofa.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The exported functions of libibverbs.so.1, loaded on first use. Each method stands for the verb
 * it names and throws {@link VerbsException} with the errno when the verb fails. The inline verbs of
 * verbs.h (data path, memory windows) are in {@link VerbsContext}.
 */
public final class Verbs {
    /** The soname loaded. */
    public static final String SONAME = "libibverbs.so.1";

    /** IBV_ACCESS_LOCAL_WRITE. */
    public static final int ACCESS_LOCAL_WRITE = 1;
    /** IBV_ACCESS_REMOTE_WRITE. */
    public static final int ACCESS_REMOTE_WRITE = 2;
    /** IBV_ACCESS_REMOTE_READ. */
    public static final int ACCESS_REMOTE_READ = 4;
    /** IBV_ACCESS_MW_BIND. */
    public static final int ACCESS_MW_BIND = 16;
    /** IBV_DEVICE_MEM_WINDOW: the device has memory windows (type 1). */
    public static final int DEVICE_MEM_WINDOW = 1 << 17;
    /** IBV_DEVICE_MEM_WINDOW_TYPE_2A. */
    public static final int DEVICE_MEM_WINDOW_TYPE_2A = 1 << 23;
    /** IBV_DEVICE_MEM_WINDOW_TYPE_2B. */
    public static final int DEVICE_MEM_WINDOW_TYPE_2B = 1 << 24;
    /** IBV_ACCESS_REMOTE_ATOMIC. */
    public static final int ACCESS_REMOTE_ATOMIC = 8;
    /** IBV_QPS_RESET. */
    public static final int QPS_RESET = 0;
    /** IBV_QPS_INIT. */
    public static final int QPS_INIT = 1;
    /** IBV_QPS_RTR. */
    public static final int QPS_RTR = 2;
    /** IBV_QPS_RTS. */
    public static final int QPS_RTS = 3;
    /** IBV_QPS_ERR. */
    public static final int QPS_ERR = 6;
    /** IBV_QP_STATE. */
    public static final int QP_STATE = 1;
    /** IBV_QP_ACCESS_FLAGS. */
    public static final int QP_ACCESS_FLAGS = 8;
    /** IBV_QP_PKEY_INDEX. */
    public static final int QP_PKEY_INDEX = 16;
    /** IBV_QP_PORT. */
    public static final int QP_PORT = 32;
    /** IBV_QP_MAX_QP_RD_ATOMIC. */
    public static final int QP_MAX_QP_RD_ATOMIC = 8192;
    /** IBV_QP_MAX_DEST_RD_ATOMIC. */
    public static final int QP_MAX_DEST_RD_ATOMIC = 131072;
    /** IBV_WR_RDMA_WRITE. */
    public static final int WR_RDMA_WRITE = 0;
    /** IBV_WR_RDMA_WRITE_WITH_IMM. */
    public static final int WR_RDMA_WRITE_WITH_IMM = 1;
    /** IBV_WR_SEND. */
    public static final int WR_SEND = 2;
    /** IBV_WR_RDMA_READ. */
    public static final int WR_RDMA_READ = 4;
    /** IBV_WR_ATOMIC_CMP_AND_SWP. */
    public static final int WR_ATOMIC_CMP_AND_SWP = 5;
    /** IBV_WR_ATOMIC_FETCH_AND_ADD. */
    public static final int WR_ATOMIC_FETCH_AND_ADD = 6;
    /** IBV_WR_LOCAL_INV. */
    public static final int WR_LOCAL_INV = 7;
    /** IBV_WR_BIND_MW. */
    public static final int WR_BIND_MW = 8;
    /** IBV_WR_SEND_WITH_INV. */
    public static final int WR_SEND_WITH_INV = 9;
    /** IBV_SEND_FENCE. */
    public static final int SEND_FENCE = 1;
    /** IBV_SEND_SIGNALED. */
    public static final int SEND_SIGNALED = 2;
    /** IBV_SEND_SOLICITED. */
    public static final int SEND_SOLICITED = 4;
    /** IBV_SEND_INLINE. */
    public static final int SEND_INLINE = 8;
    /** IBV_WC_WITH_IMM (wc_flags): the completion carries immediate data. */
    public static final int WC_WITH_IMM = 2;
    /** IBV_WC_RECV_RDMA_WITH_IMM (ibv_wc.opcode): an RDMA Write with immediate data consumed the receive. */
    public static final int WC_RECV_RDMA_WITH_IMM = 129;
    /** IBV_WC_WITH_INV (wc_flags). */
    public static final int WC_WITH_INV = 8;
    /** IBV_QPT_RC. */
    public static final int QPT_RC = 2;
    /** IBV_QPT_UD. */
    public static final int QPT_UD = 4;
    /** IBV_QP_QKEY. */
    public static final int QP_QKEY = 64;
    /** IBV_QP_SQ_PSN. */
    public static final int QP_SQ_PSN = 65536;
    /** IBV_WC_GRH: a UD receive's first 40 bytes hold the datagram's GRH (or, on RoCE v2, its IP header). */
    public static final int WC_GRH = 1;
    /** IBV_PORT_ACTIVE. */
    public static final int PORT_ACTIVE = 4;

    private static final NativeLibrary.Loader<Verbs> LOADER = new NativeLibrary.Loader<>(SONAME, Verbs::new);

    private final MethodHandle getDeviceList;
    private final MethodHandle freeDeviceList;
    private final MethodHandle getDeviceName;
    private final MethodHandle openDevice;
    private final MethodHandle closeDevice;
    private final MethodHandle queryDevice;
    private final MethodHandle queryPort;
    private final MethodHandle queryGid;
    private final MethodHandle allocPd;
    private final MethodHandle deallocPd;
    private final MethodHandle regMr;
    private final MethodHandle deregMr;
    private final MethodHandle createCompChannel;
    private final MethodHandle destroyCompChannel;
    private final MethodHandle createCq;
    private final MethodHandle destroyCq;
    private final MethodHandle resizeCq;
    private final MethodHandle regMrIova2;
    private final MethodHandle getCqEvent;
    private final MethodHandle ackCqEvents;
    private final MethodHandle createQp;
    private final MethodHandle destroyQp;
    private final MethodHandle modifyQp;
    private final MethodHandle createSrq;
    private final MethodHandle createAh;
    private final MethodHandle destroyAh;
    private final MethodHandle destroySrq;
    private final MethodHandle modifySrq;
    private final MethodHandle getAsyncEvent;
    private final MethodHandle ackAsyncEvent;
    private final MethodHandle eventTypeStr;
    private final MethodHandle wcStatusStr;

    private Verbs(NativeLibrary lib) {
        getDeviceList = lib.function("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
        freeDeviceList = lib.function("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
        getDeviceName = lib.function("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
        openDevice = lib.function("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
        closeDevice = lib.function("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        queryDevice = lib.function("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        queryPort = lib.function("ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
        queryGid = lib.function("ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));
        allocPd = lib.function("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
        deallocPd = lib.function("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        regMr = lib.function("ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
        deregMr = lib.function("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createCompChannel = lib.function("ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS));
        destroyCompChannel = lib.function("ibv_destroy_comp_channel", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createCq = lib.function("ibv_create_cq",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        destroyCq = lib.function("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        resizeCq = lib.function("ibv_resize_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        regMrIova2 = lib.has("ibv_reg_mr_iova2")
                ? lib.function("ibv_reg_mr_iova2",
                        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT))
                : null;
        getCqEvent = lib.function("ibv_get_cq_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        ackCqEvents = lib.function("ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        createQp = lib.function("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        destroyQp = lib.function("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, Downcalls.POINTER));
        modifyQp = lib.function("ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, Downcalls.POINTER, Downcalls.POINTER, JAVA_INT));
        createSrq = lib.function("ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        createAh = lib.function("ibv_create_ah", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        destroyAh = lib.function("ibv_destroy_ah", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        destroySrq = lib.function("ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        modifySrq = lib.function("ibv_modify_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        getAsyncEvent = lib.function("ibv_get_async_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        ackAsyncEvent = lib.function("ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS));
        eventTypeStr = lib.function("ibv_event_type_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        wcStatusStr = lib.function("ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    /**
     * The bindings, loading libibverbs.so.1 on the first call.
     *
     * @throws UnsatisfiedLinkError with the reason if the library (or a symbol) is missing
     */
    public static Verbs get() {
        return LOADER.get();
    }

    /** Why the library cannot be used, or null if it can (loads it if not done yet). */
    public static String unavailableReason() {
        return LOADER.unavailableReason();
    }

    /** A device of {@code ibv_get_device_list}: its pointer and name. */
    public record Device(MemorySegment pointer, String name) {
    }

    /**
     * {@code ibv_get_device_list}: the names of the devices present. A NULL list (no devices, no
     * kernel support) is an empty list, never passed to {@code ibv_free_device_list}.
     */
    public List<String> deviceNames() {
        List<String> names = new ArrayList<>();
        withDevices(devices -> devices.forEach(d -> names.add(d.name())));
        return names;
    }

    /**
     * {@code ibv_get_device_list}, lets {@code action} use the devices while the list is alive, then
     * {@code ibv_free_device_list}.
     */
    public void withDevices(java.util.function.Consumer<List<Device>> action) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment num = a.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) Errno.invoke(getDeviceList, num);
            if (list.equals(MemorySegment.NULL)) {
                action.accept(List.of());
                return;
            }
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment array = list.reinterpret(ADDRESS.byteSize() * (n + 1L));
                List<Device> devices = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = array.getAtIndex(ADDRESS, i);
                    MemorySegment name = (MemorySegment) Errno.invoke(getDeviceName, dev);
                    devices.add(new Device(dev, name.reinterpret(Long.MAX_VALUE).getString(0)));
                }
                action.accept(devices);
            } finally {
                Errno.invoke(freeDeviceList, list);
            }
        }
    }

    /** {@code ibv_get_device_name} of a context's device. */
    public String deviceName(MemorySegment context) {
        MemorySegment dev = Structs.IbvContext.DEVICE.getPointer(context.reinterpret(Structs.IbvContext.S.size()));
        MemorySegment name = (MemorySegment) Errno.invoke(getDeviceName, dev);
        return name.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** {@code ibv_open_device} of the device named {@code name}, or NULL if there is none. */
    public MemorySegment openDevice(String name) {
        MemorySegment[] ctx = {MemorySegment.NULL};
        withDevices(devices -> {
            for (Device d : devices) {
                if (d.name().equals(name)) {
                    ctx[0] = (MemorySegment) Errno.invoke(openDevice, d.pointer());
                    if (ctx[0].equals(MemorySegment.NULL)) {
                        throw new VerbsException("ibv_open_device(" + name + ")", Errno.last());
                    }
                }
            }
        });
        return ctx[0];
    }

    /** {@code ibv_close_device}. */
    public void closeDevice(MemorySegment context) {
        check("ibv_close_device", (int) Errno.invoke(closeDevice, context));
    }

    /** {@code ibv_query_device} into {@code attr} (a {@code struct ibv_device_attr}). */
    public void queryDevice(MemorySegment context, MemorySegment attr) {
        check("ibv_query_device", (int) Errno.invoke(queryDevice, context, attr));
    }

    /** {@code ibv_query_port} into {@code attr} (a {@code struct ibv_port_attr}). */
    public void queryPort(MemorySegment context, int port, MemorySegment attr) {
        check("ibv_query_port", (int) Errno.invoke(queryPort, context, (byte) port, attr));
    }

    /** {@code ibv_query_gid}: the 16 bytes of GID {@code index} of {@code port}. */
    public byte[] queryGid(MemorySegment context, int port, int index) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment gid = a.allocate(16);
            check("ibv_query_gid", (int) Errno.invoke(queryGid, context, (byte) port, index, gid));
            return gid.toArray(JAVA_BYTE);
        }
    }

    /** {@code ibv_alloc_pd}. */
    public MemorySegment allocPd(MemorySegment context) {
        return notNull("ibv_alloc_pd", (MemorySegment) Errno.invoke(allocPd, context));
    }

    /** {@code ibv_dealloc_pd}. */
    public void deallocPd(MemorySegment pd) {
        check("ibv_dealloc_pd", (int) Errno.invoke(deallocPd, pd));
    }

    /** {@code ibv_reg_mr}: registers {@code length} bytes at {@code address} with IBV_ACCESS_* flags. */
    public MemorySegment regMr(MemorySegment pd, MemorySegment address, long length, int access) {
        return notNull("ibv_reg_mr", (MemorySegment) Errno.invoke(regMr, pd, address, length, access));
    }

    /** Whether {@code ibv_reg_mr_iova2} (regions addressed from an I/O virtual address such as 0) exists. */
    public boolean hasRegMrIova() {
        return regMrIova2 != null;
    }

    /** {@code ibv_reg_mr_iova2}: registers a region that peers address from {@code iova}. */
    public MemorySegment regMrIova(MemorySegment pd, MemorySegment address, long length, long iova, int access) {
        if (regMrIova2 == null) {
            throw new VerbsException("ibv_reg_mr_iova2", Errno.EOPNOTSUPP);
        }
        return notNull("ibv_reg_mr_iova2", (MemorySegment) Errno.invoke(regMrIova2, pd, address, length, iova, access));
    }

    /** {@code ibv_resize_cq}. */
    public void resizeCq(MemorySegment cq, int cqe) {
        check("ibv_resize_cq", (int) Errno.invoke(resizeCq, cq, cqe));
    }

    /** {@code ibv_dereg_mr}. */
    public void deregMr(MemorySegment mr) {
        check("ibv_dereg_mr", (int) Errno.invoke(deregMr, mr));
    }

    /** {@code ibv_create_comp_channel}. */
    public MemorySegment createCompChannel(MemorySegment context) {
        return notNull("ibv_create_comp_channel", (MemorySegment) Errno.invoke(createCompChannel, context));
    }

    /** {@code ibv_destroy_comp_channel}. */
    public void destroyCompChannel(MemorySegment channel) {
        check("ibv_destroy_comp_channel", (int) Errno.invoke(destroyCompChannel, channel));
    }

    /** {@code ibv_create_cq} with at least {@code cqe} entries, completion events on {@code channel}. */
    public MemorySegment createCq(MemorySegment context, int cqe, MemorySegment channel) {
        return notNull("ibv_create_cq",
                (MemorySegment) Errno.invoke(createCq, context, cqe, MemorySegment.NULL, channel, 0));
    }

    /** {@code ibv_destroy_cq}; waits for unacknowledged completion events. */
    public void destroyCq(MemorySegment cq) {
        check("ibv_destroy_cq", (int) Errno.invoke(destroyCq, cq));
    }

    /**
     * {@code ibv_get_cq_event} on a non-blocking channel: the CQ that has a completion event, or NULL
     * if none is pending.
     */
    public MemorySegment getCqEvent(MemorySegment channel) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cq = a.allocate(ADDRESS);
            MemorySegment ctx = a.allocate(ADDRESS);
            int r = (int) Errno.invoke(getCqEvent, channel, cq, ctx);
            if (r != 0) {
                int e = Errno.last();
                if (e == Errno.EAGAIN || e == Errno.EINTR) {
                    return MemorySegment.NULL;
                }
                throw new VerbsException("ibv_get_cq_event", e);
            }
            return cq.get(ADDRESS, 0);
        }
    }

    /** {@code ibv_ack_cq_events}. */
    public void ackCqEvents(MemorySegment cq, int count) {
        Errno.invoke(ackCqEvents, cq, count);
    }

    /** {@code ibv_create_qp} with {@code initAttr} (a {@code struct ibv_qp_init_attr}, updated with the real caps). */
    public MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) {
        return notNull("ibv_create_qp", (MemorySegment) Errno.invoke(createQp, pd, initAttr));
    }

    /** {@code ibv_destroy_qp}. */
    public void destroyQp(MemorySegment qp) {
        check("ibv_destroy_qp", Downcalls.call1(destroyQp, qp));
    }

    /** {@code ibv_modify_qp} with {@code attr} (a {@code struct ibv_qp_attr}) and an IBV_QP_* mask. */
    public void modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
        check("ibv_modify_qp", Downcalls.call2i(modifyQp, qp, attr, mask));
    }

    /** {@code ibv_create_ah} with {@code attr} (a {@code struct ibv_ah_attr}). */
    public MemorySegment createAh(MemorySegment pd, MemorySegment attr) {
        return notNull("ibv_create_ah", (MemorySegment) Errno.invoke(createAh, pd, attr));
    }

    /** {@code ibv_destroy_ah}. */
    public void destroyAh(MemorySegment ah) {
        check("ibv_destroy_ah", (int) Errno.invoke(destroyAh, ah));
    }

    /** {@code ibv_create_srq} with {@code initAttr} (a {@code struct ibv_srq_init_attr}, updated with the real sizes). */
    public MemorySegment createSrq(MemorySegment pd, MemorySegment initAttr) {
        return notNull("ibv_create_srq", (MemorySegment) Errno.invoke(createSrq, pd, initAttr));
    }

    /** {@code ibv_destroy_srq}. */
    public void destroySrq(MemorySegment srq) {
        check("ibv_destroy_srq", (int) Errno.invoke(destroySrq, srq));
    }

    /** {@code ibv_modify_srq} with {@code attr} (a {@code struct ibv_srq_attr}) and IBV_SRQ_* mask. */
    public void modifySrq(MemorySegment srq, MemorySegment attr, int mask) {
        check("ibv_modify_srq", (int) Errno.invoke(modifySrq, srq, attr, mask));
    }

    /**
     * {@code ibv_get_async_event} on a context whose async_fd is non-blocking: fills {@code event}
     * and returns true, or returns false if none is pending. Acknowledge with {@link #ackAsyncEvent}.
     */
    public boolean getAsyncEvent(MemorySegment context, MemorySegment event) {
        int r = (int) Errno.invoke(getAsyncEvent, context, event);
        if (r != 0) {
            int e = Errno.last();
            if (e == Errno.EAGAIN || e == Errno.EINTR) {
                return false;
            }
            throw new VerbsException("ibv_get_async_event", e);
        }
        return true;
    }

    /** {@code ibv_ack_async_event}. */
    public void ackAsyncEvent(MemorySegment event) {
        Errno.invoke(ackAsyncEvent, event);
    }

    /** {@code ibv_event_type_str}. */
    public String eventTypeStr(int type) {
        return ((MemorySegment) Errno.invoke(eventTypeStr, type)).reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** {@code ibv_wc_status_str}. */
    public String wcStatusStr(int status) {
        return ((MemorySegment) Errno.invoke(wcStatusStr, status)).reinterpret(Long.MAX_VALUE).getString(0);
    }

    static MemorySegment notNull(String function, MemorySegment result) {
        if (result.equals(MemorySegment.NULL)) {
            throw new VerbsException(function, Errno.last());
        }
        return result;
    }

    static void check(String function, int result) {
        if (result != 0) {
            // Verbs return the errno (or -1 with errno set).
            throw new VerbsException(function, result > 0 ? result : Errno.last());
        }
    }

    /** Reads a C string at a native address. */
    static String string(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? null : p.reinterpret(Long.MAX_VALUE).getString(0);
    }

    static ValueLayout pointerLayout() {
        return ADDRESS;
    }
}
