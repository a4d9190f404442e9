package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import org.jdapl.dat.Dat;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.ProviderStatus;
import org.jdapl.registry.conf.DatConfEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Says what the registry makes of one entry: whether it can be opened now and why (not). */
final class EntryStatus {
    private static final Logger LOG = LoggerFactory.getLogger(EntryStatus.class);

    private EntryStatus() {
    }

    /**
     * The listing entry for {@code entry}.
     *
     * @param provider the provider present that field 5 maps onto, or null
     * @param providerName the provider field 5 maps onto (present or not), or null if none of ours
     * @param loadError why nothing is loaded, or null
     * @param openIas how many IAs are open through the provider
     */
    static RegistryEntry evaluate(DatConfEntry entry, DatProvider provider, String providerName, String loadError,
                                  int openIas) {
        boolean present = provider != null;
        boolean openable = false;
        List<String> reasons = new ArrayList<>();
        if (loadError != null) {
            reasons.add("not loaded: " + loadError);
        }
        if (!present) {
            reasons.add(absentReason(entry.libPath(), providerName));
        }
        if (!entry.isDefault()) {
            reasons.add("nondefault entry: not loaded (only default entries are)");
        }
        if (entry.apiVersion().kernel()) {
            reasons.add("kernel entry (" + entry.apiVersion() + "): never opened here");
        } else if (!entry.apiVersion().isUser(Dat.VERSION_MAJOR, Dat.VERSION_MINOR)) {
            reasons.add("API version " + entry.apiVersion() + ": only u" + Dat.VERSION_MAJOR + "."
                    + Dat.VERSION_MINOR + " entries are opened");
        }
        String status;
        if (reasons.isEmpty()) {
            ProviderStatus check = check(provider, entry);
            openable = check.canServe();
            status = (openable ? "ok" : "cannot serve ia_params")
                    + (check.reason() == null || check.reason().isBlank() ? "" : ": " + check.reason());
        } else {
            status = String.join("; ", reasons);
        }
        if (present && openIas > 0) {
            status += " [" + providerName + ": " + openIas + " IA" + (openIas == 1 ? "" : "s") + " open]";
        }
        return new RegistryEntry(entry.iaName(), entry.apiVersion().toString(), entry.threadSafe(), entry.isDefault(),
                entry.libPath(), entry.providerVersion().toString(), entry.iaParams(), entry.platformParams(),
                providerName, present, openable, status, entry.source());
    }

    /** Why an entry whose provider is absent cannot be opened. */
    static String absentReason(String libPath, String providerName) {
        if (providerName == null) {
            return "library " + libPath + " is not provided (no provider or alias of that name)";
        }
        if (!providerName.equals(libPath)) {
            return "provider " + providerName + " (for " + libPath + ") not present";
        }
        return "provider " + providerName + " not present";
    }

    private static ProviderStatus check(DatProvider provider, DatConfEntry entry) {
        try {
            ProviderStatus status = provider.check(entry.toSpec());
            return status == null ? ProviderStatus.cannot("the provider's check gave no answer") : status;
        } catch (RuntimeException e) {
            LOG.warn("provider check failed for {}", entry.source(), e);
            return ProviderStatus.cannot("the provider's check failed: " + e);
        }
    }
}
