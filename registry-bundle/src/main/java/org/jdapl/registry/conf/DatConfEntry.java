package org.jdapl.registry.conf;

import java.util.List;
import org.jdapl.dat.Dat;
import org.jdapl.dat.spi.IaSpec;

/**
 * One IA entry: a dat.conf line, a configured IA or a provider's default IA, with its eight fields.
 *
 * @param iaName field 1, the name consumers open
 * @param apiVersion field 2
 * @param threadSafe field 3 ({@code threadsafe})
 * @param isDefault field 4 ({@code default}); only default entries are opened
 * @param libPath field 5, the provider (or uDAPL library) the entry names
 * @param providerVersion field 6
 * @param iaParams field 7, handed to the provider
 * @param platformParams field 8
 * @param source where the entry came from, e.g. {@code /etc/dat.conf:12}
 */
public record DatConfEntry(String iaName, ApiVersion apiVersion, boolean threadSafe, boolean isDefault,
                           String libPath, ProviderVersion providerVersion, String iaParams, String platformParams,
                           String source) {

    /** The names of the eight fields, in order, for messages. */
    public static final List<String> FIELD_NAMES = List.of("ia_name", "api_version", "threadsafety", "default",
            "lib_path", "provider_version", "ia_params", "platform_params");

    /**
     * Builds an entry from its eight fields, checked as uDAPL's parser checks them.
     *
     * @throws IllegalArgumentException with a message for people naming the bad field
     */
    public static DatConfEntry of(List<String> fields, String source) {
        if (fields.size() != FIELD_NAMES.size()) {
            throw new IllegalArgumentException("has " + fields.size() + " field" + (fields.size() == 1 ? "" : "s")
                    + "; an entry has 8: " + String.join(" ", FIELD_NAMES));
        }
        String name = fields.get(0);
        if (name.isEmpty()) {
            throw new IllegalArgumentException("ia_name is empty");
        }
        if (name.length() > Dat.NAME_MAX_LENGTH) {
            throw new IllegalArgumentException("ia_name is longer than " + Dat.NAME_MAX_LENGTH + " characters");
        }
        ApiVersion api = ApiVersion.parse(fields.get(1));
        boolean threadSafe = switch (fields.get(2)) {
            case "threadsafe" -> true;
            case "nonthreadsafe" -> false;
            default -> throw new IllegalArgumentException(
                    "threadsafety '" + fields.get(2) + "' is neither threadsafe nor nonthreadsafe");
        };
        boolean isDefault = switch (fields.get(3)) {
            case "default" -> true;
            case "nondefault" -> false;
            default -> throw new IllegalArgumentException(
                    "default '" + fields.get(3) + "' is neither default nor nondefault");
        };
        String lib = fields.get(4);
        if (lib.isEmpty()) {
            throw new IllegalArgumentException("lib_path is empty");
        }
        ProviderVersion providerVersion = ProviderVersion.parse(fields.get(5));
        return new DatConfEntry(name, api, threadSafe, isDefault, lib, providerVersion, fields.get(6), fields.get(7),
                source);
    }

    /** What the provider gets to open this entry. */
    public IaSpec toSpec() {
        return new IaSpec(iaName, iaParams, platformParams, threadSafe, source);
    }

    /** The entry as a dat.conf line (quoted where needed), e.g. for listings. */
    public String toLine() {
        return String.join(" ", quote(iaName), apiVersion.toString(), threadSafe ? "threadsafe" : "nonthreadsafe",
                isDefault ? "default" : "nondefault", quote(libPath), quote(providerVersion.toString()),
                quote(iaParams), quote(platformParams));
    }

    static String quote(String field) {
        boolean plain = !field.isEmpty() && field.chars().noneMatch(c -> c <= ' ' || c == '"' || c == '#' || c == '\\');
        if (plain) {
            return field;
        }
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.append('"').toString();
    }
}
