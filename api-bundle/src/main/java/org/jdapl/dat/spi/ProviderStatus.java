package org.jdapl.dat.spi;

/**
 * Whether a provider can serve an entry's {@code ia_params}.
 *
 * @param canServe true if {@link DatProvider#open} should succeed
 * @param reason what the provider found (device, address), or why it cannot serve
 */
public record ProviderStatus(boolean canServe, String reason) {
    /** A provider that can serve the entry. */
    public static ProviderStatus ok(String reason) {
        return new ProviderStatus(true, reason);
    }

    /** A provider that cannot serve the entry, and why. */
    public static ProviderStatus cannot(String reason) {
        return new ProviderStatus(false, reason);
    }
}
