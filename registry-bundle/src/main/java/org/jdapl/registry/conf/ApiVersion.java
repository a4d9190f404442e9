package org.jdapl.registry.conf;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Field 2 of a dat.conf entry, {@code [u|k]MAJOR.MINOR}: the DAT API an entry's library implements
 * and whether it is the user ({@code u}, uDAPL) or the kernel ({@code k}, kDAPL) flavour.
 *
 * @param kernel true for {@code k} entries, which are never opened here
 * @param major the DAT API major version
 * @param minor the DAT API minor version
 */
public record ApiVersion(boolean kernel, int major, int minor) {
    private static final Pattern SYNTAX = Pattern.compile("([uk])([0-9]{1,9})\\.([0-9]{1,9})");

    /**
     * Parses {@code u2.0}, {@code k1.2}, ...
     *
     * @throws IllegalArgumentException with a message for people if the text is not of that form
     */
    public static ApiVersion parse(String text) {
        Matcher m = SYNTAX.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("API version '" + text + "' is not [u|k]MAJOR.MINOR (e.g. u2.0)");
        }
        return new ApiVersion(m.group(1).equals("k"), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
    }

    /** Whether this is a user-mode entry of the given DAT version. */
    public boolean isUser(int datMajor, int datMinor) {
        return !kernel && major == datMajor && minor == datMinor;
    }

    @Override
    public String toString() {
        return (kernel ? "k" : "u") + major + "." + minor;
    }
}
