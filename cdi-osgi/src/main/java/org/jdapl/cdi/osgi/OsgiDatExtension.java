package org.jdapl.cdi.osgi;

import javax.enterprise.inject.spi.Extension;
import org.jdapl.cdi.internal.DatExtension;
import org.jdapl.dat.DatRegistry;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ServiceScope;

/**
 * The extension in OSGi, as the OSGi CDI Integration (Apache Aries CDI) takes portable extensions:
 * a prototype-scoped {@link Extension} service with {@code osgi.cdi.extension=org.jdapl.cdi}, one
 * instance per CDI bundle that requires it. Its registry is the {@link DatRegistry} service, so a
 * CDI bundle opens IAs through the same registry and providers as Declarative Services bundles do;
 * when the registry service leaves, the extension does, and the CDI containers using it stop.
 */
@Component(service = Extension.class, scope = ServiceScope.PROTOTYPE,
        property = OsgiDatExtension.EXTENSION_PROPERTY + "=" + OsgiDatExtension.EXTENSION_NAME)
public class OsgiDatExtension extends DatExtension {
    /** The service property naming a CDI portable extension (OSGi CDI Integration). */
    public static final String EXTENSION_PROPERTY = "osgi.cdi.extension";
    /** The name CDI bundles require. */
    public static final String EXTENSION_NAME = "org.jdapl.cdi";

    /** An extension for one CDI bundle, over the registry service. */
    @Activate
    public OsgiDatExtension(@Reference DatRegistry registry) {
        super(registry);
    }
}
