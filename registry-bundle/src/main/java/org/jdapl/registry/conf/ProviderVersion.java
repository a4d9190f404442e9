package org.jdapl.registry.conf;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Field 6 of a dat.conf entry, {@code id.MAJOR.MINOR}: the provider's own version, e.g.
 * {@code dapl.2.0} or {@code SUNW.1.0}. It is informative; selection does not use it (as in uDAPL).
 *
 * @param id the provider id before the first dot
 * @param major the provider major version
 * @param minor the provider minor version
 */
public record ProviderVersion(String id, int major, int minor) {
    private static final Pattern SYNTAX = Pattern.compile("([^.]+)\\.([0-9]{1,9})\\.([0-9]{1,9})");

    /**
     * Parses {@code dapl.2.0}, ...
     *
     * @throws IllegalArgumentException with a message for people if the text is not of that form
     */
    public static ProviderVersion parse(String text) {
        Matcher m = SYNTAX.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("provider version '" + text + "' is not ID.MAJOR.MINOR (e.g. dapl.2.0)");
        }
        return new ProviderVersion(m.group(1), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
    }

    /**
     * The version of a provider that declares {@code version} (e.g. {@code 1.0}); versions that do
     * not read as MAJOR.MINOR count as 0.0.
     */
    public static ProviderVersion ofProvider(String providerName, String version) {
        Matcher m = Pattern.compile("([0-9]{1,9})\\.([0-9]{1,9}).*").matcher(version == null ? "" : version);
        return m.matches()
                ? new ProviderVersion(providerName, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)))
                : new ProviderVersion(providerName, 0, 0);
    }

    @Override
    public String toString() {
        return id + "." + major + "." + minor;
    }
}
