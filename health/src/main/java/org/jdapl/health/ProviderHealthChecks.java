package org.jdapl.health;

import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.felix.hc.api.HealthCheck;
import org.jdapl.dat.management.IaCountersMXBean;
import org.jdapl.dat.spi.DatProvider;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Registers one Felix Health Check ({@link ProviderHealthCheck}) for each DAT provider service, as
 * the provider comes and goes: {@code hc.name} {@code jdapl provider NAME}, {@code hc.tags}
 * {@code jdapl} and {@code jdapl-NAME}, results never cached ({@code hc.resultCacheTtlInMs} 0).
 */
@Component(immediate = true)
public final class ProviderHealthChecks {
    /** The tag every jdapl health check carries. */
    public static final String TAG = "jdapl";

    private final BundleContext context;
    private final Map<DatProvider, ServiceRegistration<HealthCheck>> checks = new ConcurrentHashMap<>();
    private final List<IaCountersMXBean> counters = new CopyOnWriteArrayList<>();

    /** Health checks registered through {@code context}. */
    @Activate
    public ProviderHealthChecks(BundleContext context) {
        this.context = context;
    }

    /** A provider arrived: its health check is registered. */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addProvider(DatProvider provider) {
        Dictionary<String, Object> props = new Hashtable<>();
        props.put(HealthCheck.NAME, "jdapl provider " + provider.name());
        props.put(HealthCheck.TAGS, new String[] {TAG, TAG + "-" + provider.name()});
        // Not cached (the executor keeps results 2 s by default): the counts are cheap and change.
        props.put(HealthCheck.RESULT_CACHE_TTL_IN_MS, 0L);
        checks.put(provider, context.registerService(HealthCheck.class, new ProviderHealthCheck(provider,
                () -> List.copyOf(counters)), props));
    }

    /** A provider left: its health check goes with it. */
    void removeProvider(DatProvider provider) {
        ServiceRegistration<HealthCheck> registration = checks.remove(provider);
        if (registration != null) {
            registration.unregister();
        }
    }

    /** An IA opened through the registry: its counters go into its provider's details. */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addCounters(IaCountersMXBean ia) {
        counters.add(ia);
    }

    void removeCounters(IaCountersMXBean ia) {
        counters.remove(ia);
    }

    @Deactivate
    void deactivate() {
        checks.keySet().forEach(this::removeProvider);
    }
}
