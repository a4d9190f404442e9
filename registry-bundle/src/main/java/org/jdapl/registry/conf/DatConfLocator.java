package org.jdapl.registry.conf;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Finds the dat.conf to read, in this order: the registry's Configuration Admin configuration
 * (property {@value #CONFIG_PROPERTY} of pid {@code org.jdapl.registry}), the system property
 * {@value #SYSTEM_PROPERTY}, the environment variable {@value #ENVIRONMENT_VARIABLE}, and the
 * default file {@code /etc/dat.conf}. With none of them (and no default file) the registry uses its
 * built-in default. Blank values count as unset. The environment and system properties are read
 * through functions so that tests can supply their own.
 */
public final class DatConfLocator {
    /** The configuration property naming the file. */
    public static final String CONFIG_PROPERTY = "dat.conf";
    /** The system property naming the file. */
    public static final String SYSTEM_PROPERTY = "dat.conf";
    /** The environment variable naming the file, as in uDAPL. */
    public static final String ENVIRONMENT_VARIABLE = "DAT_OVERRIDE";
    /** uDAPL's default file. */
    public static final Path DEFAULT_FILE = Path.of("/etc/dat.conf");

    private final Function<String, String> environment;
    private final Function<String, String> systemProperties;
    private final Path defaultFile;

    /**
     * A locator reading the given environment and system properties, with {@code defaultFile} in the
     * place of {@code /etc/dat.conf}.
     */
    public DatConfLocator(Function<String, String> environment, Function<String, String> systemProperties,
                          Path defaultFile) {
        this.environment = Objects.requireNonNull(environment);
        this.systemProperties = Objects.requireNonNull(systemProperties);
        this.defaultFile = Objects.requireNonNull(defaultFile);
    }

    /** The locator of the running process: its environment, its system properties, /etc/dat.conf. */
    public static DatConfLocator system() {
        return new DatConfLocator(System::getenv, System::getProperty, DEFAULT_FILE);
    }

    /**
     * The source in effect for a registry configured with {@code configuration} (the Configuration
     * Admin properties, possibly empty). A value naming a path that is not valid is still returned
     * as an explicit source (with {@link ConfSource#invalidPath()}), so that reading it fails with a
     * clear error rather than falling back.
     */
    public ConfSource locate(Map<String, ?> configuration) {
        Object configured = configuration == null ? null : configuration.get(CONFIG_PROPERTY);
        if (configured != null && !configured.toString().isBlank()) {
            return explicit(configured.toString(), "configuration org.jdapl.registry property " + CONFIG_PROPERTY);
        }
        String property = systemProperties.apply(SYSTEM_PROPERTY);
        if (property != null && !property.isBlank()) {
            return explicit(property, "system property " + SYSTEM_PROPERTY);
        }
        String override = environment.apply(ENVIRONMENT_VARIABLE);
        if (override != null && !override.isBlank()) {
            return explicit(override, ENVIRONMENT_VARIABLE);
        }
        if (Files.exists(defaultFile, LinkOption.NOFOLLOW_LINKS) || Files.exists(defaultFile)) {
            return new ConfSource(defaultFile, "default file", false);
        }
        return new ConfSource(null, "no configuration property, no system property " + SYSTEM_PROPERTY + ", no "
                + ENVIRONMENT_VARIABLE + ", no " + defaultFile, false);
    }

    private static ConfSource explicit(String value, String origin) {
        Path path;
        try {
            path = Path.of(value.strip());
        } catch (InvalidPathException e) {
            return new ConfSource(null, origin, true, "'" + printable(value) + "' is not a valid path: "
                    + e.getReason());
        }
        return new ConfSource(path, origin, true);
    }

    private static String printable(String value) {
        StringBuilder sb = new StringBuilder();
        value.codePoints().limit(200).forEach(c -> sb.append(c < ' ' || c == 0x7f ? '?' : (char) c));
        return sb.toString();
    }
}
