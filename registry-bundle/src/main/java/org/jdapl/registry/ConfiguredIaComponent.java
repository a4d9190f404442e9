package org.jdapl.registry;

import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.Designate;

/**
 * One IA declared by a factory configuration of pid {@code org.jdapl.registry.ia}; the registry
 * binds these services. A changed configuration re-creates the component, a deleted one removes it.
 */
@Component(service = ConfiguredIaComponent.class, configurationPid = ConfiguredIa.FACTORY_PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@Designate(ocd = IaConfiguration.class, factory = true)
public class ConfiguredIaComponent {
    private volatile ConfiguredIa ia;

    /** Reads the configuration's eight fields. */
    @Activate
    void activate(Map<String, Object> properties) {
        Object pid = properties.get("service.pid");
        ia = ConfiguredIa.fromProperties(pid == null ? ConfiguredIa.FACTORY_PID : pid.toString(), properties);
    }

    ConfiguredIa ia() {
        return ia;
    }
}
