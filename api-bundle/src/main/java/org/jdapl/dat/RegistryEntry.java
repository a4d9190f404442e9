package org.jdapl.dat;

/**
 * One entry of the registry's listing: a dat.conf line or a configured IA, and what the registry
 * makes of it.
 *
 * @param iaName field 1, the IA name
 * @param apiVersion field 2, e.g. {@code u2.0}
 * @param threadSafe field 3
 * @param isDefault field 4 ({@code default}); only default entries are opened
 * @param libPath field 5, the provider or uDAPL library named
 * @param providerVersion field 6, e.g. {@code dapl.2.0}
 * @param iaParams field 7, handed to the provider
 * @param platformParams field 8
 * @param provider the provider the entry maps onto, or null if none of ours serves it
 * @param present whether that provider is present now
 * @param openable whether {@link DatRegistry#open} can open it now (present, right version, can
 *        serve the ia_params)
 * @param status why it can or cannot be opened, for people
 * @param source where the entry came from: {@code /etc/dat.conf:12}, {@code configuration pid ...},
 *        {@code built-in}
 */
public record RegistryEntry(String iaName, String apiVersion, boolean threadSafe, boolean isDefault,
                            String libPath, String providerVersion, String iaParams, String platformParams,
                            String provider, boolean present, boolean openable, String status, String source) {
}
