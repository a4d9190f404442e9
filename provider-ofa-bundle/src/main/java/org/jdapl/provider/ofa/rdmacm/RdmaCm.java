package org.jdapl.provider.ofa.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.jdapl.provider.ofa.verbs.Downcalls.POINTER;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import org.jdapl.provider.ofa.verbs.CStruct;
import org.jdapl.provider.ofa.verbs.Downcalls;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.NativeLibrary;
import org.jdapl.provider.ofa.verbs.Structs.RdmaCmEvent;
import org.jdapl.provider.ofa.verbs.Structs.RdmaCmId;
import org.jdapl.provider.ofa.verbs.Structs.RdmaEventChannel;
import org.jdapl.provider.ofa.verbs.Structs.SockaddrIn;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * The functions of librdmacm.so.1 (the RDMA connection manager), loaded on first use. Each method
 * stands for the function it names and throws {@link VerbsException} with the errno on failure.
 */
public final class RdmaCm {
    /** The soname loaded. */
    public static final String SONAME = "librdmacm.so.1";
    /** RDMA_PS_TCP: reliable connected port space. */
    public static final int PS_TCP = 0x0106;
    /** RDMA_PS_UDP: unreliable datagram port space (SIDR exchanges). */
    public static final int PS_UDP = 0x0111;
    /** RDMA_CM_EVENT_ADDR_RESOLVED. */
    public static final int EVENT_ADDR_RESOLVED = 0;
    /** RDMA_CM_EVENT_ADDR_ERROR. */
    public static final int EVENT_ADDR_ERROR = 1;
    /** RDMA_CM_EVENT_ROUTE_RESOLVED. */
    public static final int EVENT_ROUTE_RESOLVED = 2;
    /** RDMA_CM_EVENT_ROUTE_ERROR. */
    public static final int EVENT_ROUTE_ERROR = 3;
    /** RDMA_CM_EVENT_CONNECT_REQUEST. */
    public static final int EVENT_CONNECT_REQUEST = 4;
    /** RDMA_CM_EVENT_CONNECT_RESPONSE (active side of an ID without a QP of librdmacm's). */
    public static final int EVENT_CONNECT_RESPONSE = 5;
    /** RDMA_CM_EVENT_CONNECT_ERROR. */
    public static final int EVENT_CONNECT_ERROR = 6;
    /** RDMA_CM_EVENT_UNREACHABLE. */
    public static final int EVENT_UNREACHABLE = 7;
    /** RDMA_CM_EVENT_REJECTED. */
    public static final int EVENT_REJECTED = 8;
    /** RDMA_CM_EVENT_ESTABLISHED. */
    public static final int EVENT_ESTABLISHED = 9;
    /** RDMA_CM_EVENT_DISCONNECTED. */
    public static final int EVENT_DISCONNECTED = 10;
    /** RDMA_CM_EVENT_DEVICE_REMOVAL. */
    public static final int EVENT_DEVICE_REMOVAL = 11;
    /** RDMA_CM_EVENT_ADDR_CHANGE. */
    public static final int EVENT_ADDR_CHANGE = 14;
    /** RDMA_CM_EVENT_TIMEWAIT_EXIT. */
    public static final int EVENT_TIMEWAIT_EXIT = 15;
    /** The IB CM reject reason IB_CM_REJ_CONSUMER_DEFINED: the remote consumer called rdma_reject. */
    public static final int REJECT_CONSUMER_DEFINED = 28;
    /** IBV_EVENT_COMM_EST, for {@link #notify}. */
    public static final int IBV_EVENT_COMM_EST = 4;
    /** AF_INET. */
    public static final int AF_INET = 2;

    private static final NativeLibrary.Loader<RdmaCm> LOADER = new NativeLibrary.Loader<>(SONAME, RdmaCm::new);

    private final MethodHandle getDevices;
    private final MethodHandle freeDevices;
    private final MethodHandle createEventChannel;
    private final MethodHandle destroyEventChannel;
    private final MethodHandle createId;
    private final MethodHandle destroyId;
    private final MethodHandle bindAddr;
    private final MethodHandle listen;
    private final MethodHandle getCmEvent;
    private final MethodHandle ackCmEvent;
    private final MethodHandle reject;
    private final MethodHandle eventStr;
    private final MethodHandle resolveAddr;
    private final MethodHandle resolveRoute;
    private final MethodHandle connect;
    private final MethodHandle accept;
    private final MethodHandle disconnect;
    private final MethodHandle initQpAttr;
    private final MethodHandle establish;
    private final MethodHandle notify;

    /** The size of a {@code struct sockaddr_in}. */
    public static final long SOCKADDR_SIZE = SockaddrIn.S.size();

    private RdmaCm(NativeLibrary lib) {
        getDevices = lib.function("rdma_get_devices", FunctionDescriptor.of(ADDRESS, ADDRESS));
        freeDevices = lib.function("rdma_free_devices", FunctionDescriptor.ofVoid(ADDRESS));
        createEventChannel = lib.function("rdma_create_event_channel", FunctionDescriptor.of(ADDRESS));
        destroyEventChannel = lib.function("rdma_destroy_event_channel", FunctionDescriptor.ofVoid(ADDRESS));
        createId = lib.function("rdma_create_id", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER, POINTER, JAVA_INT));
        destroyId = lib.function("rdma_destroy_id", FunctionDescriptor.of(JAVA_INT, POINTER));
        bindAddr = lib.function("rdma_bind_addr", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER));
        listen = lib.function("rdma_listen", FunctionDescriptor.of(JAVA_INT, POINTER, JAVA_INT));
        getCmEvent = lib.function("rdma_get_cm_event", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER));
        ackCmEvent = lib.function("rdma_ack_cm_event", FunctionDescriptor.of(JAVA_INT, POINTER));
        reject = lib.function("rdma_reject", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER, JAVA_INT));
        eventStr = lib.function("rdma_event_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        resolveAddr = lib.function("rdma_resolve_addr",
                FunctionDescriptor.of(JAVA_INT, POINTER, POINTER, POINTER, JAVA_INT));
        resolveRoute = lib.function("rdma_resolve_route", FunctionDescriptor.of(JAVA_INT, POINTER, JAVA_INT));
        connect = lib.function("rdma_connect", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER));
        accept = lib.function("rdma_accept", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER));
        disconnect = lib.function("rdma_disconnect", FunctionDescriptor.of(JAVA_INT, POINTER));
        initQpAttr = lib.function("rdma_init_qp_attr", FunctionDescriptor.of(JAVA_INT, POINTER, POINTER, POINTER));
        establish = lib.function("rdma_establish", FunctionDescriptor.of(JAVA_INT, POINTER));
        notify = lib.function("rdma_notify", FunctionDescriptor.of(JAVA_INT, POINTER, JAVA_INT));
    }

    /**
     * The bindings, loading librdmacm.so.1 on the first call.
     *
     * @throws UnsatisfiedLinkError with the reason if the library (or a symbol) is missing
     */
    public static RdmaCm get() {
        return LOADER.get();
    }

    /** Why librdmacm cannot be used, or null if it can. */
    public static String unavailableReason() {
        return LOADER.unavailableReason();
    }

    /**
     * The device contexts librdmacm opened ({@code rdma_get_devices}), which rdma_cm IDs bound to
     * those devices share. An empty list if there are none.
     */
    public Devices devices() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment num = a.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) Errno.invoke(getDevices, num);
            if (list.equals(MemorySegment.NULL)) {
                return new Devices(MemorySegment.NULL, List.of());
            }
            int n = num.get(JAVA_INT, 0);
            MemorySegment array = list.reinterpret(ADDRESS.byteSize() * (n + 1L));
            List<MemorySegment> contexts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                contexts.add(array.getAtIndex(ADDRESS, i));
            }
            return new Devices(list, contexts);
        }
    }

    /** The result of {@code rdma_get_devices}; {@link #free} it when the contexts are no longer used. */
    public final class Devices {
        private final MemorySegment list;
        private final List<MemorySegment> contexts;

        private Devices(MemorySegment list, List<MemorySegment> contexts) {
            this.list = list;
            this.contexts = List.copyOf(contexts);
        }

        /** The {@code struct ibv_context *} of each device. */
        public List<MemorySegment> contexts() {
            return contexts;
        }

        /** {@code rdma_free_devices}. */
        public void free() {
            if (!list.equals(MemorySegment.NULL)) {
                Errno.invoke(freeDevices, list);
            }
        }
    }

    /** {@code rdma_create_event_channel}. */
    public MemorySegment createEventChannel() {
        MemorySegment ch = (MemorySegment) Errno.invoke(createEventChannel);
        if (ch.equals(MemorySegment.NULL)) {
            throw new VerbsException("rdma_create_event_channel", Errno.last());
        }
        return ch.reinterpret(RdmaEventChannel.S.size());
    }

    /** The descriptor of an event channel. */
    public static int channelFd(MemorySegment channel) {
        return RdmaEventChannel.FD.getInt(channel.reinterpret(RdmaEventChannel.S.size()));
    }

    /** {@code rdma_destroy_event_channel}. */
    public void destroyEventChannel(MemorySegment channel) {
        Errno.invoke(destroyEventChannel, channel);
    }

    /** {@code rdma_create_id} in the RDMA_PS_TCP port space. */
    public MemorySegment createId(MemorySegment channel) {
        return createId(channel, PS_TCP);
    }

    /** {@code rdma_create_id} in the port space {@code ps} ({@link #PS_TCP}, {@link #PS_UDP}). */
    public MemorySegment createId(MemorySegment channel, int ps) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment id = a.allocate(ADDRESS);
            check("rdma_create_id", Downcalls.call3i(createId, channel, id, MemorySegment.NULL, ps));
            return RdmaCmId.S.view(id.get(ADDRESS, 0));
        }
    }

    /** {@code rdma_destroy_id}; waits until the ID's events are acknowledged. */
    public void destroyId(MemorySegment id) {
        check("rdma_destroy_id", Downcalls.call1(destroyId, id));
    }

    /** {@code rdma_bind_addr} to an IPv4 address and port (0: any port). */
    public void bindAddr(MemorySegment id, InetSocketAddress address) {
        try (Arena a = Arena.ofConfined()) {
            check("rdma_bind_addr", Downcalls.call2(bindAddr, id, sockaddr(a, address)));
        }
    }

    /** {@code rdma_listen}. */
    public void listen(MemorySegment id, int backlog) {
        check("rdma_listen", Downcalls.call1i(listen, id, backlog));
    }

    /** The source address of a bound ID ({@code route.addr.src_addr}, IPv4). */
    public static InetSocketAddress sourceAddress(MemorySegment id) {
        return inet(RdmaCmId.SRC_ADDR.slice(RdmaCmId.S.view(id), SockaddrIn.S.size()));
    }

    /** A {@code struct sockaddr_in} (port in network byte order) as a socket address. */
    private static InetSocketAddress inet(MemorySegment sa) {
        int raw = SockaddrIn.SIN_PORT.getU16(sa);
        int port = ((raw & 0xff) << 8) | (raw >> 8);
        byte[] ip = SockaddrIn.SIN_ADDR.slice(sa, 4).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The {@code struct ibv_context *} of a bound ID (NULL if bound to no device). */
    public static MemorySegment verbs(MemorySegment id) {
        return RdmaCmId.VERBS.getPointer(RdmaCmId.S.view(id));
    }

    /** The port number of a bound ID. */
    public static int portNum(MemorySegment id) {
        return RdmaCmId.PORT_NUM.getU8(RdmaCmId.S.view(id));
    }

    /** One event of {@code rdma_get_cm_event}, copied out before it was acknowledged. */
    public record CmEvent(MemorySegment id, MemorySegment listenId, int event, int status,
                          byte[] privateData, int responderResources, int initiatorDepth, MemorySegment ud) {
        /** The event's name ({@code rdma_event_str}), for messages: looked up only when asked for. */
        public String name() {
            return RdmaCm.get().eventStr(event);
        }
    }

    /**
     * {@code rdma_get_cm_event} on a non-blocking channel, then {@code rdma_ack_cm_event}, except for
     * a connection request, whose event the caller acknowledges with {@link #ack} after it has
     * answered. Returns null if nothing is pending. {@code slot} (a pointer's room, of the calling
     * thread) receives the event's address.
     */
    public Pending getCmEvent(MemorySegment channel, MemorySegment slot) {
        {
            int r = Downcalls.call2(getCmEvent, channel, slot);
            if (r != 0) {
                int e = Errno.last();
                if (e == Errno.EAGAIN || e == Errno.EINTR) {
                    return null;
                }
                throw new VerbsException("rdma_get_cm_event", e);
            }
            MemorySegment ev = RdmaCmEvent.S.view(slot.get(ADDRESS, 0));
            int type = RdmaCmEvent.EVENT.getInt(ev);
            MemorySegment pd = RdmaCmEvent.PRIVATE_DATA.getPointer(ev);
            int pdLen = RdmaCmEvent.PRIVATE_DATA_LEN.getU8(ev);
            byte[] data = pd.address() == 0 || pdLen == 0 ? new byte[0]
                    : CStruct.bytesAt(pd.address(), pdLen).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            CmEvent copy = new CmEvent(RdmaCmEvent.ID.getPointer(ev), RdmaCmEvent.LISTEN_ID.getPointer(ev), type,
                    RdmaCmEvent.STATUS.getInt(ev), data,
                    RdmaCmEvent.RESPONDER_RESOURCES.getU8(ev), RdmaCmEvent.INITIATOR_DEPTH.getU8(ev), udParam(ev, type));
            return new Pending(ev, copy);
        }
    }

    /**
     * A copy of {@code param.ud}'s address (ah_attr, qp_num, qkey: 40 bytes from its ah_attr) of an
     * ESTABLISHED event of an RDMA_PS_UDP ID, null for every other event.
     */
    private static MemorySegment udParam(MemorySegment ev, int type) {
        if (type != EVENT_ESTABLISHED || RdmaCmId.PS.getInt(RdmaCmId.S.view(RdmaCmEvent.ID.getPointer(ev)))
                != PS_UDP) {
            return null;
        }
        long at = RdmaCmEvent.UD_AH_ATTR.offset();
        return MemorySegment.ofArray(ev.asSlice(at, RdmaCmEvent.UD_QKEY.offset() + 4 - at).toArray(
                java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    /** Whether {@code id} is of the RDMA_PS_UDP port space. */
    public static boolean isUdp(MemorySegment id) {
        return RdmaCmId.PS.getInt(RdmaCmId.S.view(id)) == PS_UDP;
    }

    /** An event taken from the channel and not yet acknowledged. */
    public record Pending(MemorySegment raw, CmEvent event) {
    }

    /** {@code rdma_ack_cm_event}. */
    public void ack(Pending pending) {
        check("rdma_ack_cm_event", Downcalls.call1(ackCmEvent, pending.raw()));
    }

    /** {@code rdma_reject} without private data. */
    public void reject(MemorySegment id) {
        check("rdma_reject", Downcalls.call2i(reject, id, MemorySegment.NULL, 0));
    }

    /** {@code rdma_reject} with private data. */
    public void reject(MemorySegment id, byte[] privateData) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pd = a.allocate(Math.max(1, privateData.length));
            MemorySegment.copy(MemorySegment.ofArray(privateData), 0, pd, 0, privateData.length);
            check("rdma_reject", Downcalls.call2i(reject, id, pd, privateData.length));
        }
    }

    /**
     * {@code rdma_resolve_addr} from the address the ID is bound to, to {@code destination} (a {@code
     * struct sockaddr_in}, {@link #sockaddr(MemorySegment, InetSocketAddress)}).
     *
     * @throws VerbsException with the errno (ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL, ...)
     */
    public void resolveAddr(MemorySegment id, MemorySegment destination, int timeoutMillis) {
        check("rdma_resolve_addr", Downcalls.call3i(resolveAddr, id, MemorySegment.NULL, destination, timeoutMillis));
    }

    /** {@code rdma_resolve_route}. */
    public void resolveRoute(MemorySegment id, int timeoutMillis) {
        check("rdma_resolve_route", Downcalls.call1i(resolveRoute, id, timeoutMillis));
    }

    /** {@code rdma_connect} with {@code param} (a {@code struct rdma_conn_param}). */
    public void connect(MemorySegment id, MemorySegment param) {
        check("rdma_connect", Downcalls.call2(connect, id, param));
    }

    /** {@code rdma_accept} with {@code param} (a {@code struct rdma_conn_param}). */
    public void accept(MemorySegment id, MemorySegment param) {
        check("rdma_accept", Downcalls.call2(accept, id, param));
    }

    /** {@code rdma_disconnect}: sends a DREQ (or answers one with a DREP). Returns 0 or the errno. */
    public int disconnect(MemorySegment id) {
        int r = Downcalls.call1(disconnect, id);
        return r == 0 ? 0 : Errno.last();
    }

    /**
     * {@code rdma_init_qp_attr}: fills {@code attr} (a {@code struct ibv_qp_attr} whose qp_state names the
     * state wanted) for the ID's connection and returns the IBV_QP_* mask to pass to ibv_modify_qp,
     * which it writes to {@code mask} (an int's room) first.
     */
    public int initQpAttr(MemorySegment id, MemorySegment attr, MemorySegment mask) {
        check("rdma_init_qp_attr", Downcalls.call3(initQpAttr, id, attr, mask));
        return mask.get(JAVA_INT, 0);
    }

    /** {@code rdma_establish}: completes an active connection whose QP the caller moved to RTS. */
    public void establish(MemorySegment id) {
        check("rdma_establish", Downcalls.call1(establish, id));
    }

    /** {@code rdma_notify}: tells the CM of a QP event (IBV_EVENT_COMM_EST). */
    public void notify(MemorySegment id, int event) {
        Downcalls.call1i(notify, id, event);
    }

    /** The destination address of an ID ({@code route.addr.dst_addr}, IPv4). */
    public static InetSocketAddress destinationAddress(MemorySegment id) {
        return inet(RdmaCmId.DST_ADDR.slice(RdmaCmId.S.view(id), SockaddrIn.S.size()));
    }

    /** {@code rdma_event_str}. */
    public String eventStr(int event) {
        return ((MemorySegment) Errno.invoke(eventStr, event)).reinterpret(Long.MAX_VALUE).getString(0);
    }

    private static MemorySegment sockaddr(Arena a, InetSocketAddress address) {
        return sockaddr(a.allocate(SockaddrIn.S.size(), 4), address);
    }

    /**
     * Writes {@code address} into {@code sa} (at least {@link #SOCKADDR_SIZE} bytes) as a {@code struct
     * sockaddr_in}; only IPv4.
     */
    public static MemorySegment sockaddr(MemorySegment sa, InetSocketAddress address) {
        if (!(address.getAddress() instanceof Inet4Address v4)) {
            throw new VerbsException("rdma_bind_addr (only IPv4 addresses)", Errno.EINVAL);
        }
        sa.asSlice(0, SockaddrIn.S.size()).fill((byte) 0);
        SockaddrIn.SIN_FAMILY.setU16(sa, AF_INET);
        int port = address.getPort();
        SockaddrIn.SIN_PORT.setU16(sa, ((port & 0xff) << 8) | ((port >> 8) & 0xff));
        MemorySegment.copy(MemorySegment.ofArray(v4.getAddress()), 0, SockaddrIn.SIN_ADDR.slice(sa, 4), 0, 4);
        return sa;
    }

    private static void check(String function, int result) {
        if (result != 0) {
            throw new VerbsException(function, Errno.last());
        }
    }
}
