package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Errno;
import org.jdapl.provider.ofa.verbs.Structs.IbvDeviceAttr;
import org.jdapl.provider.ofa.verbs.Structs.IbvPortAttr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsContext;
import org.jdapl.provider.ofa.verbs.VerbsException;

/**
 * The device port an IA runs on: an open verbs context (shared with rdma_cm when librdmacm is
 * there, so that rdma_cm IDs and our queue pairs live on one context), what
 * {@code ibv_query_device} and {@code ibv_query_port} report, and the port's IPv4 address.
 */
final class OfaDevice {
    final String name;
    final int port;
    final VerbsContext context;
    final Inet4Address address;
    final String firmware;
    final long maxMrSize;
    final int vendorId;
    final int vendorPartId;
    final int hwVer;
    final int maxQp;
    final int maxQpWr;
    final int capFlags;
    final int maxSge;
    final int maxCq;
    final int maxCqe;
    final int maxMr;
    final int maxPd;
    final int maxQpRdAtom;
    final int maxQpInitRdAtom;
    /** {@code ibv_device_attr.atomic_cap}: 0 (IBV_ATOMIC_NONE) where the device has no remote atomics. */
    final int atomicCap;
    final int maxMw;
    final int maxSrq;
    final int maxSrqWr;
    final int portState;
    final int activeMtu;
    final long maxMsgSize;
    final int linkLayer;
    private final Runnable release;

    private OfaDevice(String name, int port, MemorySegment ctx, Runnable release) {
        this.name = name;
        this.port = port;
        this.release = release;
        Verbs v = Verbs.get();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment d = a.allocate(IbvDeviceAttr.S.size(), 8);
            v.queryDevice(ctx, d);
            int ports = IbvDeviceAttr.PHYS_PORT_CNT.getU8(d);
            if (port < 1 || port > ports) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                        "device " + name + " has no port " + port + " (ports 1.." + ports + ")");
            }
            firmware = IbvDeviceAttr.FW_VER.slice(d, 64).getString(0);
            maxMrSize = IbvDeviceAttr.MAX_MR_SIZE.getLong(d);
            vendorId = IbvDeviceAttr.VENDOR_ID.getInt(d);
            vendorPartId = IbvDeviceAttr.VENDOR_PART_ID.getInt(d);
            hwVer = IbvDeviceAttr.HW_VER.getInt(d);
            maxQp = IbvDeviceAttr.MAX_QP.getInt(d);
            maxQpWr = IbvDeviceAttr.MAX_QP_WR.getInt(d);
            capFlags = IbvDeviceAttr.DEVICE_CAP_FLAGS.getInt(d);
            maxSge = IbvDeviceAttr.MAX_SGE.getInt(d);
            maxCq = IbvDeviceAttr.MAX_CQ.getInt(d);
            maxCqe = IbvDeviceAttr.MAX_CQE.getInt(d);
            maxMr = IbvDeviceAttr.MAX_MR.getInt(d);
            maxPd = IbvDeviceAttr.MAX_PD.getInt(d);
            maxQpRdAtom = IbvDeviceAttr.MAX_QP_RD_ATOM.getInt(d);
            maxQpInitRdAtom = IbvDeviceAttr.MAX_QP_INIT_RD_ATOM.getInt(d);
            atomicCap = IbvDeviceAttr.ATOMIC_CAP.getInt(d);
            maxMw = IbvDeviceAttr.MAX_MW.getInt(d);
            maxSrq = IbvDeviceAttr.MAX_SRQ.getInt(d);
            maxSrqWr = IbvDeviceAttr.MAX_SRQ_WR.getInt(d);
            MemorySegment p = a.allocate(IbvPortAttr.S.size(), 8);
            v.queryPort(ctx, port, p);
            portState = IbvPortAttr.STATE.getInt(p);
            activeMtu = 128 << IbvPortAttr.ACTIVE_MTU.getInt(p);
            maxMsgSize = Integer.toUnsignedLong(IbvPortAttr.MAX_MSG_SZ.getInt(p));
            linkLayer = IbvPortAttr.LINK_LAYER.getU8(p);
            address = ipv4FromGids(v, ctx, port, Math.min(IbvPortAttr.GID_TBL_LEN.getInt(p), 16));
        }
        this.context = new VerbsContext(ctx);
    }

    /**
     * Opens device {@code name} port {@code port}.
     *
     * @throws DatException INSUFFICIENT_RESOURCES (RESOURCE_DEVICE) if it is not there
     */
    static OfaDevice open(String name, int port) {
        Verbs v = Verbs.get();
        if (RdmaCm.unavailableReason() == null) {
            RdmaCm.Devices devices = RdmaCm.get().devices();
            for (MemorySegment ctx : devices.contexts()) {
                if (v.deviceName(ctx).equals(name)) {
                    try {
                        return new OfaDevice(name, port, ctx, devices::free);
                    } catch (RuntimeException e) {
                        devices.free();
                        throw e;
                    }
                }
            }
            devices.free();
        }
        MemorySegment ctx = v.openDevice(name);
        if (ctx.equals(MemorySegment.NULL)) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "no RDMA device " + name + " (devices: " + v.deviceNames() + ")");
        }
        try {
            return new OfaDevice(name, port, ctx, () -> v.closeDevice(ctx));
        } catch (RuntimeException e) {
            v.closeDevice(ctx);
            throw e;
        }
    }

    /**
     * Opens the device and port rdma_cm finds for an IPv4 address ({@code rdma_bind_addr}).
     *
     * @throws DatException INSUFFICIENT_RESOURCES (RESOURCE_DEVICE) if no device has the address
     */
    static OfaDevice openByAddress(Inet4Address ip) {
        if (RdmaCm.unavailableReason() != null) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "an address needs rdma_cm: " + RdmaCm.unavailableReason());
        }
        RdmaCm cm = RdmaCm.get();
        MemorySegment ch = cm.createEventChannel();
        String device;
        int port;
        try {
            MemorySegment id = cm.createId(ch);
            try {
                cm.bindAddr(id, new InetSocketAddress(ip, 0));
                MemorySegment verbs = RdmaCm.verbs(id);
                if (verbs.equals(MemorySegment.NULL)) {
                    throw new VerbsException("rdma_bind_addr (no RDMA device has " + ip.getHostAddress() + ")",
                            Errno.ENODEV);
                }
                device = Verbs.get().deviceName(verbs);
                port = RdmaCm.portNum(id);
            } finally {
                cm.destroyId(id);
            }
        } catch (VerbsException e) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "no RDMA device has address " + ip.getHostAddress() + ": " + e.getMessage(), e);
        } finally {
            cm.destroyEventChannel(ch);
        }
        OfaDevice d = open(device, port);
        return d.withAddress(ip);
    }

    private OfaDevice withAddress(Inet4Address ip) {
        return ip.equals(address) ? this : new OfaDevice(this, ip);
    }

    private OfaDevice(OfaDevice o, Inet4Address ip) {
        name = o.name;
        port = o.port;
        context = o.context;
        address = ip;
        firmware = o.firmware;
        maxMrSize = o.maxMrSize;
        vendorId = o.vendorId;
        vendorPartId = o.vendorPartId;
        hwVer = o.hwVer;
        maxQp = o.maxQp;
        maxQpWr = o.maxQpWr;
        capFlags = o.capFlags;
        maxSge = o.maxSge;
        maxCq = o.maxCq;
        maxCqe = o.maxCqe;
        maxMr = o.maxMr;
        maxPd = o.maxPd;
        maxQpRdAtom = o.maxQpRdAtom;
        maxQpInitRdAtom = o.maxQpInitRdAtom;
        atomicCap = o.atomicCap;
        maxMw = o.maxMw;
        maxSrq = o.maxSrq;
        maxSrqWr = o.maxSrqWr;
        portState = o.portState;
        activeMtu = o.activeMtu;
        maxMsgSize = o.maxMsgSize;
        linkLayer = o.linkLayer;
        release = o.release;
    }

    /** The IPv4 address in the port's GID table (RoCE GIDs hold ::ffff:a.b.c.d), or null. */
    private static Inet4Address ipv4FromGids(Verbs v, MemorySegment ctx, int port, int count) {
        for (int i = 0; i < count; i++) {
            byte[] gid;
            try {
                gid = v.queryGid(ctx, port, i);
            } catch (VerbsException e) {
                continue;
            }
            boolean mapped = true;
            for (int b = 0; b < 10; b++) {
                mapped &= gid[b] == 0;
            }
            if (mapped && gid[10] == (byte) 0xff && gid[11] == (byte) 0xff) {
                try {
                    return (Inet4Address) InetAddress.getByAddress(new byte[] {gid[12], gid[13], gid[14], gid[15]});
                } catch (UnknownHostException e) {
                    return null;
                }
            }
        }
        return null;
    }

    /** The vendor ID rdma_rxe (Soft-RoCE) reports. */
    static final int RXE_VENDOR_ID = 0xffffff;

    /**
     * Why the device's memory windows are not used for RMRs, or null. rdma_rxe binds windows but its responder checks an RDMA access against the whole MR, not the
     * window (Linux 6.1), so an RMR would let a peer write outside it. The system property
     * {@code jdapl.ofa.softwareMemoryWindows=true} uses them anyway (for tests of the binds).
     */
    String windowsRefused() {
        if (vendorId == RXE_VENDOR_ID && !Boolean.getBoolean("jdapl.ofa.softwareMemoryWindows")) {
            return "the software device " + name + " does not check memory window bounds on RDMA access";
        }
        return null;
    }

    /** Whether the device has memory windows of type 1 (PZ scope RMRs) that the provider uses. */
    boolean hasMwType1() {
        return (capFlags & Verbs.DEVICE_MEM_WINDOW) != 0 && context.hasMemoryWindows() && windowsRefused() == null;
    }

    /** Whether the device has memory windows of type 2 (EP scope RMRs) that the provider uses. */
    boolean hasMwType2() {
        return (capFlags & (Verbs.DEVICE_MEM_WINDOW_TYPE_2A | Verbs.DEVICE_MEM_WINDOW_TYPE_2B)) != 0
                && context.hasMemoryWindows() && windowsRefused() == null;
    }

    /** The device and port attributes as DAT named attributes. */
    Map<String, String> specific() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("device", name);
        m.put("port", Integer.toString(port));
        m.put("port_state", portState == Verbs.PORT_ACTIVE ? "ACTIVE" : "state " + portState);
        m.put("link_layer", linkLayer == 2 ? "Ethernet" : linkLayer == 1 ? "InfiniBand" : "unknown");
        m.put("active_mtu", Integer.toString(activeMtu));
        m.put("max_qp", Integer.toString(maxQp));
        m.put("max_cq", Integer.toString(maxCq));
        m.put("max_cqe", Integer.toString(maxCqe));
        m.put("max_mw", Integer.toString(maxMw));
        m.put("device_cap_flags", "0x" + Integer.toHexString(capFlags));
        m.put("mw_type1", Boolean.toString(hasMwType1()));
        m.put("mw_type2", Boolean.toString(hasMwType2()));
        if (windowsRefused() != null) {
            m.put("mw_refused", windowsRefused());
        }
        m.put("vendor_id", "0x" + Integer.toHexString(vendorId));
        m.put("vendor_part_id", Integer.toString(vendorPartId));
        if (address != null) {
            m.put("ipv4", address.getHostAddress());
        }
        return m;
    }

    /** Releases the context (rdma_free_devices or ibv_close_device). */
    void close() {
        release.run();
    }
}
