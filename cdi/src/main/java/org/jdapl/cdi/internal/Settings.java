package org.jdapl.cdi.internal;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's configuration outside OSGi: {@value #DAT_CONF} (the dat.conf to read) and IA
 * declarations {@value #IA_PREFIX}{@code <name>} (the rest of a dat.conf line), read through
 * MicroProfile Config where an implementation is present (its sources include the system
 * properties), else from the system properties. Without {@value #DAT_CONF} the registry finds
 * dat.conf as it always does: system property {@code dat.conf}, {@code DAT_OVERRIDE},
 * {@code /etc/dat.conf}.
 */
final class Settings {
    /** The property naming the dat.conf file. */
    static final String DAT_CONF = "jdapl.dat.conf";
    /** The prefix of IA declarations. */
    static final String IA_PREFIX = "jdapl.ia.";

    private static final Logger LOG = LoggerFactory.getLogger(Settings.class);

    private Settings() {
    }

    /** The registry configuration ({@code dat.conf}, {@code ia.<name>}) from MicroProfile Config or system properties. */
    static Map<String, String> read() {
        try {
            Map<String, String> fromConfig = MicroProfileSettings.read();
            LOG.debug("CDI: registry configuration from MicroProfile Config: {}", fromConfig.keySet());
            return fromConfig;
        } catch (NoClassDefFoundError | IllegalStateException absent) {
            // No MicroProfile Config API on the class path, or no implementation of it.
            LOG.debug("CDI: no MicroProfile Config ({}); registry configuration from system properties", absent.toString());
        }
        return translate(System.getProperties().stringPropertyNames(),
                name -> Optional.ofNullable(System.getProperty(name)));
    }

    /** Maps {@value #DAT_CONF} and {@value #IA_PREFIX}* onto the registry's {@code dat.conf} and {@code ia.*}. */
    static Map<String, String> translate(Iterable<String> names, Function<String, Optional<String>> value) {
        Map<String, String> out = new TreeMap<>();
        for (String name : names) {
            if (name.equals(DAT_CONF)) {
                value.apply(name).filter(v -> !v.isBlank()).ifPresent(v -> out.put("dat.conf", v));
            } else if (name.startsWith(IA_PREFIX) && name.length() > IA_PREFIX.length()) {
                value.apply(name).ifPresent(v -> out.put("ia." + name.substring(IA_PREFIX.length()), v));
            }
        }
        return out;
    }
}
