package org.jdapl.cdi.internal;

import java.util.Map;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * {@link Settings} through MicroProfile Config. Loaded only when {@link Settings} asks; without
 * the API on the class path that fails with NoClassDefFoundError, without an implementation
 * {@link ConfigProvider#getConfig()} throws IllegalStateException.
 */
final class MicroProfileSettings {
    private MicroProfileSettings() {
    }

    static Map<String, String> read() {
        Config config = ConfigProvider.getConfig();
        return Settings.translate(config.getPropertyNames(), name -> config.getOptionalValue(name, String.class));
    }
}
