package org.jdapl.registry.conf;

import java.nio.file.Path;

/**
 * Which dat.conf the registry reads, and why.
 *
 * @param file the file, or null for the built-in default (no file: every present provider's
 *        default IAs)
 * @param origin what named the file, e.g. {@code DAT_OVERRIDE} or {@code system property dat.conf}
 * @param explicit whether the file was named explicitly (configuration, system property,
 *        DAT_OVERRIDE) rather than being the default {@code /etc/dat.conf}
 * @param invalidPath for an explicit value that names no valid path, why (then {@code file} is null
 *        and reading fails); otherwise null
 */
public record ConfSource(Path file, String origin, boolean explicit, String invalidPath) {
    /** A source naming a file, or the built-in default for a null file. */
    public ConfSource(Path file, String origin, boolean explicit) {
        this(file, origin, explicit, null);
    }

    /** Whether no file is read. */
    public boolean builtIn() {
        return file == null && invalidPath == null;
    }

    @Override
    public String toString() {
        if (invalidPath != null) {
            return "invalid path (" + origin + "): " + invalidPath;
        }
        return builtIn() ? "built-in default (" + origin + ")" : "file " + file + " (" + origin + ")";
    }
}
