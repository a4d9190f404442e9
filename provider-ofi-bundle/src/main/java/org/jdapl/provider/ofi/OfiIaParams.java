package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;

/**
 * The {@code ia_params} of an ofi dat.conf entry: {@code "<provider> <domain-or-interface>"}, e.g.
 * {@code "tcp lo"} or {@code "verbs rxe0"}, naming a libfabric provider (as {@code fi_info -p}) and
 * its domain (as {@code fi_info}'s {@code domain:}, for tcp the network interface). The domain may
 * be omitted ({@code "tcp"}): the first MSG domain of the provider is used.
 *
 * @param provider the libfabric provider name
 * @param domain the domain name, or null for the first one
 */
record OfiIaParams(String provider, String domain) {
    static OfiIaParams parse(String iaParams) {
        String[] f = iaParams == null ? new String[0] : iaParams.trim().split("\\s+");
        if (f.length == 0 || f[0].isEmpty() || f.length > 2) {
            throw new DatException(DatReturnType.INVALID_PARAMETER,
                    "ofi ia_params must be \"<libfabric provider> [<domain>]\", e.g. \"tcp lo\", not \"" + iaParams + "\"");
        }
        return new OfiIaParams(f[0], f.length == 2 ? f[1] : null);
    }

    @Override
    public String toString() {
        return domain == null ? provider : provider + " " + domain;
    }
}
