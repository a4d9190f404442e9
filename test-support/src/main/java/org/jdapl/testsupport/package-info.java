/**
 * What the providers' tests share: {@link org.jdapl.testsupport.AllocationMeter}, the heap bytes a
 * data path allocates per operation. Test-scoped in every module that uses it; no bundle ships it.
 */
@Export
@Version("1.0.0")
package org.jdapl.testsupport;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
