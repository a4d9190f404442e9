/**
 * Management of open IAs: each IA opened through the registry is published as an
 * {@link org.jdapl.dat.management.IaCountersMXBean} named under {@code org.jdapl}
 * ({@link org.jdapl.dat.management.IaCountersNames}), in the platform MBean server or, in OSGi, as a
 * service with the JMX whiteboard's {@code jmx.objectname} property.
 */
@Export
@Version("1.0.0")
package org.jdapl.dat.management;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
