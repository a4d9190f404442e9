/**
 * The provider SPI: what a DAT provider implements ({@link org.jdapl.dat.spi.DatProvider}) and
 * registers as an OSGi service or a ServiceLoader entry, for the registry to find.
 */
@Export
@Version("1.1.0")
package org.jdapl.dat.spi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
