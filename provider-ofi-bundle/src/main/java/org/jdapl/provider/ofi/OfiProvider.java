package org.jdapl.provider.ofi;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiInfo;
import org.osgi.service.component.annotations.Component;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The libfabric (OFI) provider: DAT over libfabric's connection-oriented endpoints ({@code FI_EP_MSG})
 * through java.lang.foreign. It serves dat.conf entries naming {@code libdaplofi.so.2} (or
 * {@code ofi}) with {@code ia_params} {@code "<libfabric provider> <domain>"}, e.g. {@code "tcp lo"},
 * and offers {@code ofi-v2-<provider>-<domain>} for every MSG domain {@code fi_getinfo} lists. Without
 * libfabric, or without the named provider or domain, it stays registered, opens nothing and says why
 * in {@link #status} and {@link #check}.
 */
@Component(service = DatProvider.class,
        property = {DatProvider.PROVIDER_PROPERTY + "=" + OfiProvider.NAME,
                DatProvider.VERSION_PROPERTY + "=" + OfiProvider.VERSION})
public final class OfiProvider implements DatProvider {
    /** The provider's name. */
    public static final String NAME = "ofi";
    /** The provider's version. */
    public static final String VERSION = "2.0";
    /** The uDAPL library name dat.conf entries use for this provider. */
    public static final String LIBRARY = "libdaplofi.so.2";

    private static final Logger LOG = LoggerFactory.getLogger(OfiProvider.class);

    final ObjectCounts counts = new ObjectCounts();
    private final List<OfiIa> open = new CopyOnWriteArrayList<>();

    /** A provider; libfabric is loaded on first use. */
    public OfiProvider() {
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
        return Set.of(LIBRARY);
    }

    @Override
    public boolean threadSafe() {
        return true;
    }

    /** {@code ofi-v2-<provider>-<domain>} for every MSG domain libfabric lists; none without libfabric. */
    @Override
    public List<IaSpec> defaultIas() {
        List<IaSpec> specs = new ArrayList<>();
        if (Fi.unavailableReason() != null) {
            return specs;
        }
        try {
            for (FiInfo.Domain d : FiInfo.msgDomains()) {
                specs.add(new IaSpec("ofi-v2-" + d.provider() + "-" + d.domain(), d.provider() + " " + d.domain(), "",
                        true, "ofi provider: libfabric " + d.provider() + " domain " + d.domain()));
            }
            specs.addAll(RdmIa.defaultIas());
        } catch (FiException e) {
            LOG.warn("fi_getinfo failed", e);
        }
        return specs;
    }

    /** The MSG domains libfabric offers, or why the provider can open nothing. */
    @Override
    public ProviderStatus status() {
        String missing = Fi.unavailableReason();
        if (missing != null) {
            return ProviderStatus.cannot(missing);
        }
        try {
            List<FiInfo.Domain> ds = FiInfo.msgDomains();
            if (ds.isEmpty()) {
                return ProviderStatus.cannot("libfabric offers no FI_EP_MSG endpoint (fi_getinfo found none)");
            }
            List<String> names = ds.stream().map(d -> d.provider() + " " + d.domain()).distinct().toList();
            return ProviderStatus.ok("libfabric " + (Fi.get().version() >>> 16) + "." + (Fi.get().version() & 0xffff)
                    + ", MSG domains: " + String.join(", ", names));
        } catch (FiException e) {
            return ProviderStatus.cannot("fi_getinfo failed: " + e.getMessage());
        }
    }

    @Override
    public ProviderStatus check(IaSpec spec) {
        String missing = Fi.unavailableReason();
        if (missing != null) {
            return ProviderStatus.cannot(missing);
        }
        OfiIaParams p;
        try {
            p = OfiIaParams.parse(spec.iaParams());
        } catch (DatException e) {
            return ProviderStatus.cannot(e.getMessage());
        }
        try {
            long info = FiInfo.query(p.provider(), p.domain());
            long entry = FiInfo.pick(info, p.domain());
            Fi.get().freeinfo(info);
            if (entry == 0) {
                try {
                    Fi.get().freeinfo(RdmIa.select(p));
                    return ProviderStatus.ok("libfabric " + p + " (FI_EP_RDM)");
                } catch (DatException e) {
                    return ProviderStatus.cannot(e.getMessage());
                }
            }
            if (entry == 0) {
                return ProviderStatus.cannot("libfabric offers no FI_EP_MSG endpoint of provider " + p.provider()
                        + (p.domain() == null ? "" : " in domain " + p.domain()) + " (fi_info -p " + p.provider()
                        + " -t FI_EP_MSG lists what there is)");
            }
            return ProviderStatus.ok("libfabric " + p);
        } catch (FiException e) {
            return ProviderStatus.cannot("fi_getinfo failed: " + e.getMessage());
        }
    }

    @Override
    public InterfaceAdapter open(IaSpec spec, int asyncEvdMinQlen) {
        OfiIaParams p = OfiIaParams.parse(spec.iaParams());
        ProviderStatus s = check(spec);
        if (!s.canServe()) {
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "cannot open " + spec.iaName() + ": " + s.reason());
        }
        OfiIa ia = OfiIa.open(this, spec.iaName(), p, asyncEvdMinQlen);
        open.add(ia);
        return ia;
    }

    void closed(OfiIa ia) {
        open.remove(ia);
    }

    @Override
    public void abort(InterfaceAdapter ia, String reason) {
        if (ia instanceof OfiIa o && open.contains(o)) {
            o.abort(reason);
        }
    }

    /** Closes every IA still open (the bundle is stopping). */
    public void deactivate() {
        for (OfiIa ia : open) {
            ia.close(CloseFlag.ABRUPT);
        }
    }

    @Override
    public Map<HandleType, Integer> openObjects() {
        return counts.snapshot();
    }
}
