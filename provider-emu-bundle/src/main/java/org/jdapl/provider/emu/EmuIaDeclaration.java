package org.jdapl.provider.emu;

import org.jdapl.dat.spi.IaSpec;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * One emulated IA declared through Configuration Admin: a factory configuration of
 * {@code org.jdapl.provider.emu.ia} with {@code ia_name} and {@code ia_params}. The provider offers
 * every declared IA in {@link EmuProvider#defaultIas()}.
 */
@Component(service = EmuIaDeclaration.class, configurationPid = EmuIaDeclaration.FACTORY_PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = EmuIaDeclaration.Config.class, factory = true)
public final class EmuIaDeclaration {
    /** The factory PID of IA declarations. */
    public static final String FACTORY_PID = "org.jdapl.provider.emu.ia";

    /** The metatype of an IA declaration. */
    @ObjectClassDefinition(name = "jdapl emulated IA", description = "An Interface Adapter of the emulated DAT "
            + "provider, offered by the registry under its name.")
    public @interface Config {
        /** The IA name consumers open (dat.conf field 1). */
        @AttributeDefinition(name = "IA name", description = "The name consumers open, e.g. emu1.")
        String ia__name();

        /** The provider parameters (dat.conf field 7). */
        @AttributeDefinition(name = "ia_params", description = "loopback, loopback <label>, or tcp <host>:<port>.")
        String ia__params() default "loopback";

        /** Whether the entry is thread safe (dat.conf field 3). */
        @AttributeDefinition(name = "Thread safe")
        boolean threadsafe() default true;
    }

    private final IaSpec spec;

    /** Reads the configuration. */
    @Activate
    public EmuIaDeclaration(Config config) {
        this.spec = new IaSpec(config.ia__name(), config.ia__params(), "", config.threadsafe(),
                "configuration " + FACTORY_PID);
    }

    /** The declared IA. */
    public IaSpec spec() {
        return spec;
    }
}
