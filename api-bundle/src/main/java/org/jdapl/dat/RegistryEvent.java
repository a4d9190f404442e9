package org.jdapl.dat;

import java.util.List;
import java.util.Objects;

/**
 * What a {@link DatRegistry} tells its listeners ({@link DatRegistry#addListener}): a provider
 * appearing or leaving, and an IA broken because its provider left (REG_06). OSGi consumers see the
 * same through the service registry; these records give it to plain Java and CDI applications,
 * which can reopen an IA when its provider is back.
 */
public sealed interface RegistryEvent {
    /** The name of the provider concerned, e.g. {@code emu}. */
    String provider();

    /**
     * A provider became available ({@code dat_registry_add_provider}, or its OSGi service
     * appeared): the IAs it serves can be opened now.
     *
     * @param provider the provider's name
     * @param version the provider's version
     */
    record ProviderAdded(String provider, String version) implements RegistryEvent {
        public ProviderAdded {
            Objects.requireNonNull(provider);
        }
    }

    /**
     * A provider was withdrawn ({@code dat_registry_remove_provider}, or its OSGi service left).
     * Sent after the {@link IaBroken} events of the IAs it had open.
     *
     * @param provider the provider's name
     * @param version the provider's version
     * @param brokenIas the names of the IAs that were open through it and are broken now
     */
    record ProviderRemoved(String provider, String version, List<String> brokenIas) implements RegistryEvent {
        public ProviderRemoved {
            Objects.requireNonNull(provider);
            brokenIas = List.copyOf(brokenIas);
        }
    }

    /**
     * REG_06: an open IA was broken because its provider left. The IA's asynchronous EVD has had
     * {@code ASYNC_ERROR_IA_CATASTROPHIC}, and every handle of it fails {@code INVALID_HANDLE} now;
     * the consumer may open the IA again once a provider serves it.
     *
     * @param ia the broken IA (freed)
     * @param iaName the name it was opened by
     * @param provider the provider that left
     * @param reason why, for people
     */
    record IaBroken(InterfaceAdapter ia, String iaName, String provider, String reason) implements RegistryEvent {
        public IaBroken {
            Objects.requireNonNull(ia);
            Objects.requireNonNull(provider);
        }
    }
}
