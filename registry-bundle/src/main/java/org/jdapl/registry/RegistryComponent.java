package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.registry.conf.DatConfLocator;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry as an OSGi service: configured by pid {@value #PID} (property {@code dat.conf}),
 * with every {@link DatProvider} service bound as it comes and goes (the whiteboard pattern) and the
 * IAs of factory configurations {@code org.jdapl.registry.ia}. When two providers of one name are
 * registered, the second waits and takes over when the first leaves.
 */
@Component(service = DatRegistry.class, configurationPid = RegistryComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = RegistryConfiguration.class)
public class RegistryComponent extends ProviderRegistry {
    /** The registry's configuration pid. */
    public static final String PID = "org.jdapl.registry";

    private static final Logger LOG = LoggerFactory.getLogger(RegistryComponent.class);

    /** Providers bound but shadowed by an earlier one of the same name. Guarded by itself. */
    private final List<DatProvider> waiting = new ArrayList<>();

    /** The component: the process's environment and system properties, /etc/dat.conf. */
    public RegistryComponent() {
        this(DatConfLocator.system());
    }

    /** A component finding dat.conf through {@code locator} (for tests). */
    public RegistryComponent(DatConfLocator locator) {
        super(locator);
    }

    /**
     * Reads dat.conf as the configuration says; the IAs opened from now on are published as services
     * for the JMX whiteboard.
     */
    @Activate
    void start(BundleContext context, Map<String, Object> properties) {
        monitor.publishThrough(new WhiteboardPublisher(context));
        activate(properties);
    }

    /** Reads dat.conf as the configuration says (the activation without a framework, for tests). */
    void activate(Map<String, Object> properties) {
        configure(properties);
    }

    /** Withdraws the counters of the IAs still open. */
    @Deactivate
    void deactivate() {
        monitor.close();
    }

    /** Reads dat.conf again after a configuration change; open IAs stay open. */
    @Modified
    void modified(Map<String, Object> properties) {
        configure(properties);
    }

    /** A provider service appeared: it becomes openable at once. */
    @Reference(service = DatProvider.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindProvider(DatProvider provider, Map<String, Object> properties) {
        Object declared = properties == null ? null : properties.get(DatProvider.PROVIDER_PROPERTY);
        if (declared != null && !declared.toString().equals(provider.name())) {
            LOG.warn("provider service property {}={} differs from its name() {}; the registry uses {}",
                    DatProvider.PROVIDER_PROPERTY, declared, provider.name(), provider.name());
        }
        try {
            addProvider(provider);
        } catch (DatException e) {
            LOG.warn("provider service {} waits: {}", provider, e.getMessage());
            synchronized (waiting) {
                waiting.add(provider);
            }
        }
    }

    /** A provider service left: its IAs are broken, and a waiting provider of that name takes over. */
    void unbindProvider(DatProvider provider) {
        synchronized (waiting) {
            if (waiting.removeIf(p -> p == provider)) {
                return;
            }
        }
        try {
            removeProvider(provider);
        } catch (DatException e) {
            LOG.warn("provider service {} was not bound: {}", provider, e.getMessage());
            return;
        }
        List<DatProvider> candidates;
        synchronized (waiting) {
            candidates = new ArrayList<>(waiting);
        }
        for (DatProvider next : candidates) {
            try {
                addProvider(next);
                synchronized (waiting) {
                    waiting.removeIf(p -> p == next);
                }
            } catch (DatException e) {
                LOG.debug("provider {} still waits: {}", next, e.getMessage());
            }
        }
    }

    /** An IA configuration appeared or changed. */
    @Reference(service = ConfiguredIaComponent.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindConfiguredIa(ConfiguredIaComponent component) {
        putConfiguredIa(component.ia());
    }

    /** An IA configuration was deleted. */
    void unbindConfiguredIa(ConfiguredIaComponent component) {
        removeConfiguredIa(component.ia().pid());
    }
}
