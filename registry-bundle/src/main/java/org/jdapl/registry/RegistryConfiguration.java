package org.jdapl.registry;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The registry's configuration (pid {@code org.jdapl.registry}), described for metatype tools. */
@ObjectClassDefinition(id = RegistryComponent.PID, name = "DAT registry",
        description = "Where the DAT registry reads dat.conf.")
@interface RegistryConfiguration {
    /** The dat.conf path; overrides the system property dat.conf, DAT_OVERRIDE and /etc/dat.conf. */
    @AttributeDefinition(name = "dat.conf", required = false,
            description = "Path of the dat.conf to read. Takes precedence over the system property dat.conf, "
                    + "the DAT_OVERRIDE environment variable and /etc/dat.conf. If it cannot be read, "
                    + "nothing is loaded.")
    String dat_conf();
}
