package org.jdapl.registry;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.registry.conf.DatConfLocator;
import org.jdapl.registry.conf.DatConfParser;
import org.jdapl.registry.conf.ParseResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry outside OSGi, as {@link DatRegistry#standalone()} finds it: dat.conf located by the
 * system property {@code dat.conf}, {@code DAT_OVERRIDE} or {@code /etc/dat.conf}, and providers
 * found by {@link ServiceLoader} ({@code META-INF/services/org.jdapl.dat.spi.DatProvider}). More
 * providers can be added with {@link #addProvider}. {@link DatRegistry#standalone(Map)} makes one
 * configured by properties instead ({@link #StandaloneRegistry(Map)}).
 */
public final class StandaloneRegistry extends ProviderRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(StandaloneRegistry.class);

    /** Loads dat.conf and the providers on the class path (the ServiceLoader constructor). */
    public StandaloneRegistry() {
        this(DatConfLocator.system(), Thread.currentThread().getContextClassLoader());
    }

    /**
     * A registry configured by {@code configuration} (see {@link DatRegistry#standalone(Map)}):
     * {@code dat.conf} as the OSGi registry's configuration property, and IA declarations
     * {@code ia.<name>} with the rest of a dat.conf line.
     */
    public StandaloneRegistry(Map<String, ?> configuration) {
        this(DatConfLocator.system(), Thread.currentThread().getContextClassLoader(), configuration);
    }

    /**
     * A registry reading dat.conf through {@code locator}, with the providers {@link ServiceLoader}
     * finds through {@code loader} (and the API's own class loader).
     */
    public StandaloneRegistry(DatConfLocator locator, ClassLoader loader) {
        this(locator, loader, Map.of());
    }

    private StandaloneRegistry(DatConfLocator locator, ClassLoader loader, Map<String, ?> configuration) {
        super(locator);
        Map<String, Object> registry = new TreeMap<>();
        configuration.forEach((key, value) -> {
            if (key.startsWith(IA_PREFIX)) {
                putConfiguredIa(declared(key, value));
            } else {
                registry.put(key, value);
            }
        });
        configure(registry);
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

    /** The prefix of IA declarations in the configuration. */
    public static final String IA_PREFIX = "ia.";

    /** An IA declared by property {@code ia.<name>}: the name and the rest of a dat.conf line. */
    private static ConfiguredIa declared(String key, Object value) {
        String name = key.substring(IA_PREFIX.length());
        String source = "property " + key;
        ParseResult parsed = DatConfParser.parse(name + " " + value, source);
        if (name.isBlank() || name.chars().anyMatch(Character::isWhitespace)) {
            return new ConfiguredIa(source, null, source + ": '" + name + "' is not an IA name");
        }
        if (!parsed.ok() || parsed.entries().size() != 1) {
            String why = !parsed.ok() ? parsed.error() : parsed.problems().isEmpty()
                    ? "not one dat.conf line" : parsed.problems().getFirst().toString();
            return new ConfiguredIa(source, null, source + ": " + why);
        }
        return new ConfiguredIa(source, parsed.entries().getFirst(), null);
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
