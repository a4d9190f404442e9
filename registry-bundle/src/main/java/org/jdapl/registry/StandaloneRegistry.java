package org.jdapl.registry;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.registry.conf.DatConfLocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry outside OSGi, as {@link DatRegistry#standalone()} finds it: dat.conf located by the
 * system property {@code dat.conf}, {@code DAT_OVERRIDE} or {@code /etc/dat.conf}, and providers
 * found by {@link ServiceLoader} ({@code META-INF/services/org.jdapl.dat.spi.DatProvider}). More
 * providers can be added with {@link #addProvider}.
 */
public final class StandaloneRegistry extends ProviderRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(StandaloneRegistry.class);

    /** Loads dat.conf and the providers on the class path (the ServiceLoader constructor). */
    public StandaloneRegistry() {
        this(DatConfLocator.system(), Thread.currentThread().getContextClassLoader());
    }

    /**
     * A registry reading dat.conf through {@code locator}, with the providers {@link ServiceLoader}
     * finds through {@code loader} (and the API's own class loader).
     */
    public StandaloneRegistry(DatConfLocator locator, ClassLoader loader) {
        super(locator);
        configure(Map.of());
        Map<Class<?>, DatProvider> found = new LinkedHashMap<>();
        if (loader != null) {
            discover(ServiceLoader.load(DatProvider.class, loader), found);
        }
        discover(ServiceLoader.load(DatProvider.class, DatProvider.class.getClassLoader()), found);
        for (DatProvider provider : found.values()) {
            try {
                addProvider(provider);
            } catch (DatException e) {
                LOG.warn("provider {} not added: {}", provider.getClass().getName(), e.getMessage());
            }
        }
    }

    private static void discover(ServiceLoader<DatProvider> loader, Map<Class<?>, DatProvider> found) {
        var it = loader.stream().iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    return;
                }
                ServiceLoader.Provider<DatProvider> p = it.next();
                if (!found.containsKey(p.type())) {
                    found.put(p.type(), p.get());
                }
            } catch (ServiceConfigurationError | RuntimeException e) {
                LOG.warn("a DatProvider on the class path could not be loaded", e);
            }
        }
    }
}
