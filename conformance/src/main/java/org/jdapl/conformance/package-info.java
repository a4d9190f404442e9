/**
 * The DAT conformance kit: one case per ID of the conformance list (sections CONN, DISC, FREE,
 * LMR, OBJ, SRQ and EP), written once against {@link org.jdapl.dat} and run against any provider through a
 * {@link org.jdapl.conformance.ConformanceFixture}. {@link org.jdapl.conformance.ConformanceKit}
 * runs the cases with a time bound each and writes the report; {@link
 * org.jdapl.conformance.ConformanceMain} does the same from a command line. The kit needs no test
 * framework at run time.
 */
@Export
@Version("1.1.0")
package org.jdapl.conformance;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
