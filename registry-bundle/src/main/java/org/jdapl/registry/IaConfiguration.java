package org.jdapl.registry;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/**
 * One IA declared by configuration (factory pid {@code org.jdapl.registry.ia}): the eight dat.conf fields.
 * Method names follow the OSGi name mapping ({@code __} is {@code _}, a leading {@code $} is dropped),
 * so the properties are {@code ia_name}, {@code api_version}, ... and {@code default}.
 */
@ObjectClassDefinition(id = ConfiguredIa.FACTORY_PID, name = "DAT IA",
        description = "An IA the DAT registry can open, with the fields of a dat.conf line.")
@interface IaConfiguration {
    /** Field 1. */
    @AttributeDefinition(name = "ia_name", description = "The name consumers open.")
    String ia__name();

    /** Field 2. */
    @AttributeDefinition(name = "api_version", description = "[u|k]MAJOR.MINOR; only u2.0 is opened.")
    String api__version() default "u2.0";

    /** Field 3. */
    @AttributeDefinition(name = "threadsafety", options = {@Option(value = "threadsafe"),
        @Option(value = "nonthreadsafe")})
    String threadsafety() default "threadsafe";

    /** Field 4. */
    @AttributeDefinition(name = "default", options = {@Option(value = "default"), @Option(value = "nondefault")})
    String $default() default "default";

    /** Field 5. */
    @AttributeDefinition(name = "lib_path", description = "The provider (emu, ofa) or a uDAPL library name.")
    String lib__path();

    /** Field 6. */
    @AttributeDefinition(name = "provider_version", description = "ID.MAJOR.MINOR")
    String provider__version() default "jdapl.2.0";

    /** Field 7. */
    @AttributeDefinition(name = "ia_params", required = false, description = "Handed to the provider.")
    String ia__params() default "";

    /** Field 8. */
    @AttributeDefinition(name = "platform_params", required = false)
    String platform__params() default "";
}
