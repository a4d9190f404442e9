package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Structs.IbvDeviceAttr;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.osgi.service.component.annotations.Component;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The OFA verbs provider: DAT over libibverbs and librdmacm through java.lang.foreign. It serves
 * the dat.conf entries of OFED's uDAPL ({@code libdaplofa.so.2}, {@code libdaploscm.so.2},
 * {@code libdaploucm.so.2}) with {@code ia_params} {@code "<device> <port>"} or
 * {@code "<netdev|IPv4> <port>"}, and offers {@code ofa-v2-<device>-<port>} for every device port
 * present. Without the libraries or without a device it stays registered, opens nothing and says
 * why in {@link #check}.
 */
@Component(service = DatProvider.class,
        property = {DatProvider.PROVIDER_PROPERTY + "=" + OfaProvider.NAME,
                DatProvider.VERSION_PROPERTY + "=" + OfaProvider.VERSION})
public final class OfaProvider implements DatProvider {
    /** The provider's name. */
    public static final String NAME = "ofa";
    /** The provider's version. */
    public static final String VERSION = "2.0";

    private static final Logger LOG = LoggerFactory.getLogger(OfaProvider.class);

    private final ObjectCounts counts = new ObjectCounts();
    private final List<OfaIa> open = new CopyOnWriteArrayList<>();

    /** A provider; nothing is loaded until it is used. */
    public OfaProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String version() {
        return VERSION;
    }

    @Override
    public Set<String> libraryAliases() {
        return Set.of("libdaplofa.so.2", "libdaploscm.so.2", "libdaploucm.so.2");
    }

    @Override
    public boolean threadSafe() {
        return true;
    }

    /** One {@code ofa-v2-<device>-<port>} IA per port of every device present; none without devices. */
    @Override
    public List<IaSpec> defaultIas() {
        List<IaSpec> specs = new ArrayList<>();
        if (Verbs.unavailableReason() != null) {
            return specs;
        }
        try {
            Verbs v = Verbs.get();
            for (String dev : v.deviceNames()) {
                int ports = portCount(v, dev);
                for (int p = 1; p <= ports; p++) {
                    specs.add(new IaSpec("ofa-v2-" + dev + "-" + p, dev + " " + p, "", true,
                            "ofa provider: device " + dev + " port " + p));
                }
            }
        } catch (VerbsException e) {
            LOG.warn("cannot list RDMA devices", e);
        }
        return specs;
    }

    /** The devices libibverbs found, or why the provider can open nothing. */
    @Override
    public ProviderStatus status() {
        String missing = Verbs.unavailableReason();
        if (missing != null) {
            return ProviderStatus.cannot("libibverbs is not available: " + missing);
        }
        try {
            List<String> devices = Verbs.get().deviceNames();
            return devices.isEmpty()
                    ? ProviderStatus.cannot("no RDMA device (ibv_get_device_list found none)")
                    : ProviderStatus.ok("devices " + String.join(", ", devices));
        } catch (VerbsException e) {
            return ProviderStatus.cannot("cannot list RDMA devices: " + e.getMessage());
        }
    }

    private static int portCount(Verbs v, String device) {
        MemorySegment ctx = v.openDevice(device);
        if (ctx.equals(MemorySegment.NULL)) {
            return 0;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvDeviceAttr.S.size(), 8);
            v.queryDevice(ctx, attr);
            return IbvDeviceAttr.PHYS_PORT_CNT.getU8(attr);
        } finally {
            v.closeDevice(ctx);
        }
    }

    /**
     * Whether the entry can be opened now: libibverbs loads, the ia_params parse, the device (or
     * the address's device) is present and has the port.
     */
    @Override
    public ProviderStatus check(IaSpec spec) {
        String missing = Verbs.unavailableReason();
        if (missing != null) {
            return ProviderStatus.cannot("libibverbs is not available: " + missing);
        }
        OfaIaParams params;
        try {
            params = OfaIaParams.parse(spec.iaParams());
        } catch (DatException e) {
            return ProviderStatus.cannot(e.getMessage());
        }
        try {
            List<String> devices = Verbs.get().deviceNames();
            if (devices.isEmpty()) {
                return ProviderStatus.cannot("no RDMA device (ibv_get_device_list found none)");
            }
            if (devices.contains(params.first())) {
                int ports = portCount(Verbs.get(), params.first());
                return params.port() >= 1 && params.port() <= ports
                        ? ProviderStatus.ok("device " + params.first() + " port " + params.port())
                        : ProviderStatus.cannot("device " + params.first() + " has no port " + params.port());
            }
            Inet4Address ip = params.address();
            if (ip == null) {
                return ProviderStatus.cannot("\"" + params.first() + "\" is no RDMA device " + devices
                        + ", and no interface or IPv4 address");
            }
            String cm = RdmaCm.unavailableReason();
            if (cm != null) {
                return ProviderStatus.cannot("address " + ip.getHostAddress() + " needs librdmacm: " + cm);
            }
            return ProviderStatus.ok("address " + ip.getHostAddress() + " (rdma_cm), devices " + devices);
        } catch (VerbsException e) {
            return ProviderStatus.cannot(e.getMessage());
        }
    }

    /**
     * {@code dat_ia_open} for an entry of this provider.
     *
     * @throws DatException INVALID_PARAMETER for ia_params that do not parse; INSUFFICIENT_RESOURCES
     *         (RESOURCE_DEVICE) without libibverbs, without the device or port, or without an RDMA
     *         device for the address
     */
    @Override
    public InterfaceAdapter open(IaSpec spec, int asyncEvdMinQlen) {
        if (asyncEvdMinQlen < 1) {
            throw DatException.invalidParameter(2, "asynchronous EVD length " + asyncEvdMinQlen + " is below 1");
        }
        OfaIaParams params = OfaIaParams.parse(spec.iaParams());
        String missing = Verbs.unavailableReason();
        if (missing != null) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "libibverbs is not available: " + missing);
        }
        List<String> devices;
        try {
            devices = Verbs.get().deviceNames();
        } catch (VerbsException e) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    e.getMessage(), e);
        }
        if (devices.isEmpty()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "no RDMA device (ibv_get_device_list found none) for " + spec.iaName());
        }
        OfaDevice device;
        try {
            if (devices.contains(params.first())) {
                device = OfaDevice.open(params.first(), params.port());
            } else {
                Inet4Address ip = params.address();
                if (ip == null) {
                    throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                            "\"" + params.first() + "\" is no RDMA device " + devices
                                    + ", and no interface with an IPv4 address");
                }
                device = OfaDevice.openByAddress(ip);
            }
        } catch (VerbsException e) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "cannot open " + spec.iaName() + ": " + e.getMessage(), e);
        }
        try {
            OfaIa ia = new OfaIa(this, spec.iaName(), device, asyncEvdMinQlen, counts);
            open.add(ia);
            LOG.debug("opened {}", ia);
            return ia;
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    @Override
    public void abort(InterfaceAdapter ia, String reason) {
        if (ia instanceof OfaIa o && open.contains(o)) {
            o.abort(reason);
        }
    }

    @Override
    public Map<HandleType, Integer> openObjects() {
        return counts.snapshot();
    }

    void closed(OfaIa ia) {
        open.remove(ia);
    }
}
