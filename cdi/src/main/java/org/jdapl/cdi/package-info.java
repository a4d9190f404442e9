/**
 * jdapl in Jakarta CDI: the {@link org.jdapl.dat.DatRegistry} and {@link org.jdapl.cdi.Ia}-qualified
 * {@link org.jdapl.dat.InterfaceAdapter}s are injectable, and the registry's
 * {@link org.jdapl.dat.RegistryEvent}s (providers appearing and leaving, IAs broken by a provider
 * leaving) are CDI events. A portable extension ({@code org.jdapl.cdi.internal.DatExtension},
 * registered through {@code META-INF/services}) does it, in any CDI container.
 */
@Export
@Version("1.0.0")
package org.jdapl.cdi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
