package org.jdapl.dat;

/**
 * DAT_PROVIDER_INFO: one IA {@code dat_registry_list_providers} reports.
 *
 * @param iaName the IA name
 * @param datVersionMajor the DAT API major version of the entry
 * @param datVersionMinor the DAT API minor version of the entry
 * @param threadSafe whether the entry is thread safe
 */
public record ProviderInfo(String iaName, int datVersionMajor, int datVersionMinor, boolean threadSafe) {
}
