package org.jdapl.dat;

/**
 * What {@code dat_ia_query} returns.
 *
 * @param asyncEvd the IA's asynchronous event dispatcher
 * @param attributes the IA attributes (DAT_IA_ATTR)
 * @param provider the provider attributes (DAT_PROVIDER_ATTR)
 */
public record IaQuery(EventDispatcher asyncEvd, IaAttributes attributes, ProviderAttributes provider) {
}
