package org.jdapl.dat.spi;

import java.util.Map;
import org.jdapl.dat.DatRegistry;
import org.osgi.annotation.versioning.ProviderType;

/**
 * How {@link DatRegistry#standalone(Map)} makes a configured registry outside OSGi: the registry
 * implementation offers one through {@link java.util.ServiceLoader}
 * ({@code META-INF/services/org.jdapl.dat.spi.RegistryFactory}).
 */
@ProviderType
public interface RegistryFactory {
    /**
     * A registry with the providers found on the class path, configured by {@code configuration}:
     * the properties the OSGi registry takes from Configuration Admin (pid {@code org.jdapl.registry},
     * e.g. {@code dat.conf}), and IA declarations {@code ia.<name>} whose value is the rest of a
     * dat.conf line (fields 2 to 8).
     */
    DatRegistry create(Map<String, ?> configuration);
}
