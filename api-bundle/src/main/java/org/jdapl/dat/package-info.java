/**
 * The DAT 2.0 (uDAPL) consumer API: one type per DAT object, {@link java.lang.foreign.MemorySegment}
 * for memory, {@link org.jdapl.dat.DatException} for every DAT_RETURN error, and the
 * {@link org.jdapl.dat.DatEvent} records for events. Start at {@link org.jdapl.dat.DatRegistry}.
 */
@Export
@Version("1.4.0")
package org.jdapl.dat;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
