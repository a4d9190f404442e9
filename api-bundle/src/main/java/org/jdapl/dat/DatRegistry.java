package org.jdapl.dat;

import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.function.Consumer;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.RegistryFactory;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The DAT registry: opens Interface Adapters by name as uDAPL's static registry does, from
 * dat.conf entries and the providers present. In OSGi it is a service; in plain Java
 * {@link #standalone()} finds the implementation on the class path.
 */
@ProviderType
public interface DatRegistry {
    /**
     * {@code dat_ia_open}: opens the IA named {@code iaName} for DAT 2.0. Entries of the name are
     * tried in file order; the first provider that opens the IA wins.
     *
     * <p>In C this is a macro passing DAT_THREADSAFE, which the uDAPL reference implementation
     * defines as false, so that OFED's {@code nonthreadsafe} lines open. jdapl's objects are all
     * thread safe: this method asks for a {@code threadsafe} entry first and, when the name has
     * none, opens a {@code nonthreadsafe} one. {@link #openv} matches the key exactly.
     *
     * @param asyncEvdMinQlen the length of the IA's asynchronous EVD, 1 or more
     * @throws DatException PROVIDER_NOT_FOUND (NAME_NOT_REGISTERED) if no usable entry has the name;
     *         INVALID_PARAMETER; the provider's error if every entry's provider failed
     */
    default InterfaceAdapter open(String iaName, int asyncEvdMinQlen) {
        try {
            return openv(iaName, asyncEvdMinQlen, Dat.VERSION_MAJOR, Dat.VERSION_MINOR, true);
        } catch (DatException threadSafeMiss) {
            if (threadSafeMiss.type() != DatReturnType.PROVIDER_NOT_FOUND) {
                throw threadSafeMiss;
            }
            return openv(iaName, asyncEvdMinQlen, Dat.VERSION_MAJOR, Dat.VERSION_MINOR, false);
        }
    }

    /**
     * {@code dat_ia_openv}: opens an IA matched by name, API version and thread safety exactly.
     *
     * @throws DatException as {@link #open}
     */
    InterfaceAdapter openv(String iaName, int asyncEvdMinQlen, int datMajor, int datMinor, boolean threadSafe);

    /**
     * {@code dat_registry_list_providers}: the IAs that can be opened.
     */
    List<ProviderInfo> listProviders();

    /**
     * The full listing behind {@code dat_registry_list_providers}: every entry the registry knows
     * (also those it will not open, with the reason), in file order.
     */
    List<RegistryEntry> entries();

    /**
     * {@code dat_registry_add_provider}: makes a provider available, as a provider service appearing
     * in OSGi does.
     *
     * @throws DatException PROVIDER_ALREADY_REGISTERED if a provider of that name is present
     */
    void addProvider(DatProvider provider);

    /**
     * {@code dat_registry_remove_provider}: withdraws a provider. IAs it has open are broken with an
     * asynchronous error and their handles fail INVALID_HANDLE.
     *
     * @throws DatException PROVIDER_NOT_FOUND if it is not registered
     */
    void removeProvider(DatProvider provider);

    /**
     * {@code dat_registry_providers_related}: whether two IA names lead to the same provider and the
     * same device (ia_params), so that their objects can work together.
     *
     * @throws DatException PROVIDER_NOT_FOUND (NAME_NOT_REGISTERED) for an unknown name
     */
    boolean providersRelated(String iaName1, String iaName2);

    /** Where the entries come from now, e.g. {@code file /etc/dat.conf (DAT_OVERRIDE)}. */
    String configurationSource();

    /**
     * Tells {@code listener} of providers appearing and leaving and of IAs broken by a provider
     * leaving ({@link RegistryEvent}), from now on until {@link #removeListener}. Listeners are
     * called in the thread that added or removed the provider, outside the registry's locks, in
     * the order they were added; one that throws is logged and does not stop the others. Adding a
     * listener twice has no effect.
     */
    void addListener(Consumer<? super RegistryEvent> listener);

    /** Stops telling {@code listener}; nothing happens if it was not added. */
    void removeListener(Consumer<? super RegistryEvent> listener);

    /**
     * A registry for plain Java: the first implementation that {@link ServiceLoader} finds, with
     * providers also found by ServiceLoader.
     *
     * @throws DatException PROVIDER_NOT_FOUND if no registry implementation is on the class path
     */
    static DatRegistry standalone() {
        return ServiceLoader.load(DatRegistry.class, DatRegistry.class.getClassLoader()).findFirst()
                .or(() -> ServiceLoader.load(DatRegistry.class).findFirst())
                .orElseThrow(() -> new DatException(DatReturnType.PROVIDER_NOT_FOUND,
                        "no DatRegistry implementation on the class path (add jdapl-registry)"));
    }

    /**
     * A registry for plain Java configured by properties rather than the process's system
     * properties: {@code dat.conf} names the file to read (before {@code DAT_OVERRIDE} and
     * {@code /etc/dat.conf}, as the OSGi registry's configuration does), and each {@code ia.<name>}
     * declares the IA {@code <name>} with the rest of a dat.conf line, e.g.
     * {@code ia.emu-test = u2.0 threadsafe default emu jdapl.2.0 "loopback" ""}. With an empty map
     * it is {@link #standalone()}.
     *
     * @throws DatException PROVIDER_NOT_FOUND if no registry implementation is on the class path
     */
    static DatRegistry standalone(Map<String, ?> configuration) {
        return ServiceLoader.load(RegistryFactory.class, DatRegistry.class.getClassLoader()).findFirst()
                .or(() -> ServiceLoader.load(RegistryFactory.class).findFirst())
                .orElseThrow(() -> new DatException(DatReturnType.PROVIDER_NOT_FOUND,
                        "no DatRegistry implementation on the class path (add jdapl-registry)"))
                .create(configuration);
    }
}
