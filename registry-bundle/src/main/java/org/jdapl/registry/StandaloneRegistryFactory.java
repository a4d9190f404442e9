package org.jdapl.registry;

import java.util.Map;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.spi.RegistryFactory;

/**
 * {@link DatRegistry#standalone(Map)}'s factory, found by {@link java.util.ServiceLoader}: a
 * {@link StandaloneRegistry} configured by properties.
 */
public final class StandaloneRegistryFactory implements RegistryFactory {
    @Override
    public DatRegistry create(Map<String, ?> configuration) {
        return new StandaloneRegistry(configuration == null ? Map.of() : configuration);
    }
}
