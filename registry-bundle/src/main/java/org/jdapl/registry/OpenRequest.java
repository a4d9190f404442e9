package org.jdapl.registry;

import java.util.List;
import java.util.stream.Collectors;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.registry.conf.DatConfEntry;

/**
 * The arguments of one {@code dat_ia_openv}, checked at construction, and what the registry answers
 * when no entry or no provider opens the IA: which entries match (the DAT version, thread safety,
 * default), why none matched, and the failures of those that were tried.
 */
record OpenRequest(String iaName, int asyncEvdMinQlen, int datMajor, int datMinor, boolean threadSafe) {

    OpenRequest {
        if (iaName == null || iaName.isEmpty() || iaName.length() > Dat.NAME_MAX_LENGTH) {
            throw DatException.invalidParameter(1, "the IA name must have 1 to " + Dat.NAME_MAX_LENGTH
                    + " characters, not " + (iaName == null ? "null" : iaName.length()));
        }
        if (asyncEvdMinQlen < 1) {
            throw DatException.invalidParameter(2, "the async EVD length must be 1 or more, not " + asyncEvdMinQlen);
        }
        if (datMajor != Dat.VERSION_MAJOR || datMinor != Dat.VERSION_MINOR) {
            throw notRegistered("IA '" + iaName + "' for DAT " + datMajor + "." + datMinor
                    + ": this registry opens u" + Dat.VERSION_MAJOR + "." + Dat.VERSION_MINOR + " entries only");
        }
    }

    /** Whether {@code entry} (naming the IA) is a default entry of the request's DAT version and thread safety. */
    boolean matches(DatConfEntry entry) {
        return entry.isDefault() && entry.apiVersion().isUser(datMajor, datMinor) && entry.threadSafe() == threadSafe;
    }

    /** No entry of those naming the IA ({@code named}) {@link #matches}. */
    DatException noMatch(List<DatConfEntry> named) {
        String key = "u" + datMajor + "." + datMinor + " " + (threadSafe ? "threadsafe" : "nonthreadsafe") + " default";
        return notRegistered("IA '" + iaName + "' has no " + key + " entry: " + named.stream()
                .map(e -> e.source() + " is " + e.apiVersion() + " " + (e.threadSafe() ? "threadsafe" : "nonthreadsafe")
                        + " " + (e.isDefault() ? "default" : "nondefault"))
                .collect(Collectors.joining("; ")));
    }

    /**
     * No matching entry opened the IA: NAME_NOT_REGISTERED if no provider was present ({@code absent}
     * says why of each), else the first provider's failure with the others' messages and suppressed.
     */
    DatException notOpened(List<DatException> failures, List<String> absent) {
        if (failures.isEmpty()) {
            return notRegistered("IA '" + iaName + "' has no provider present: "
                    + String.join("; ", absent));
        }
        DatException first = failures.getFirst();
        DatException failure = new DatException(first.type(), first.subtype(), "no provider could open IA '"
                + iaName + "': " + failures.stream().map(Throwable::getMessage).collect(Collectors.joining("; "))
                + (absent.isEmpty() ? "" : "; " + String.join("; ", absent)), first);
        failures.stream().skip(1).forEach(failure::addSuppressed);
        return failure;
    }

    /** PROVIDER_NOT_FOUND with NAME_NOT_REGISTERED: no usable entry or provider for the IA. */
    static DatException notRegistered(String message) {
        return new DatException(DatReturnType.PROVIDER_NOT_FOUND, DatReturnSubtype.NAME_NOT_REGISTERED, message);
    }
}
