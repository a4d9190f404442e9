package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdapl.registry.conf.DatConfEntry;

/**
 * An IA declared through Configuration Admin (a factory configuration of pid
 * {@value #FACTORY_PID}), with the eight dat.conf fields as properties named as in
 * {@link DatConfEntry#FIELD_NAMES}; or why the configuration does not make an entry.
 *
 * @param pid the configuration's pid
 * @param entry the entry, or null if the configuration is malformed
 * @param problem why the configuration is malformed, or null
 */
record ConfiguredIa(String pid, DatConfEntry entry, String problem) {
    /** The factory pid of IA configurations. */
    static final String FACTORY_PID = "org.jdapl.registry.ia";

    /**
     * Reads a configuration's properties: {@code ia_name} and {@code lib_path} are required;
     * {@code api_version} defaults to {@code u2.0}, {@code threadsafety} to {@code threadsafe},
     * {@code default} to {@code default}, {@code provider_version} to {@code jdapl.2.0},
     * {@code ia_params} and {@code platform_params} to empty. {@code threadsafety} and
     * {@code default} may also be booleans.
     */
    static ConfiguredIa fromProperties(String pid, Map<String, ?> properties) {
        List<String> fields = new ArrayList<>(8);
        fields.add(text(properties.get("ia_name"), ""));
        fields.add(text(properties.get("api_version"), "u2.0"));
        fields.add(flag(properties.get("threadsafety"), "threadsafe", "nonthreadsafe"));
        fields.add(flag(properties.get("default"), "default", "nondefault"));
        fields.add(text(properties.get("lib_path"), ""));
        fields.add(text(properties.get("provider_version"), "jdapl.2.0"));
        fields.add(text(properties.get("ia_params"), ""));
        fields.add(text(properties.get("platform_params"), ""));
        try {
            return new ConfiguredIa(pid, DatConfEntry.of(fields, "configuration " + pid), null);
        } catch (IllegalArgumentException e) {
            return new ConfiguredIa(pid, null, "configuration " + pid + ": " + e.getMessage());
        }
    }

    private static String text(Object value, String otherwise) {
        return value == null ? otherwise : value.toString().strip();
    }

    private static String flag(Object value, String yes, String no) {
        if (value instanceof Boolean b) {
            return b ? yes : no;
        }
        return text(value, yes);
    }
}
