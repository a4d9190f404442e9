package org.jdapl.dat.spi;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdapl.dat.DatException;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.osgi.annotation.versioning.ProviderType;

/**
 * What a DAT provider implements and registers: in OSGi one service of this type per provider
 * (with the {@link #PROVIDER_PROPERTY} and {@link #VERSION_PROPERTY} properties), in plain Java a
 * {@link java.util.ServiceLoader} entry. The registry binds providers dynamically and opens IAs
 * through them by the dat.conf entries that name them.
 */
@ProviderType
public interface DatProvider {
    /** The service property naming the provider, e.g. {@code dat.provider=emu}. */
    String PROVIDER_PROPERTY = "dat.provider";
    /** The service property holding the provider's version. */
    String VERSION_PROPERTY = "dat.provider.version";

    /** The provider's name, as dat.conf field 5 names it (e.g. {@code emu}, {@code ofa}). */
    String name();

    /** The provider's version, e.g. {@code 1.0}. */
    String version();

    /**
     * Other names dat.conf field 5 may use for this provider, such as uDAPL library names
     * ({@code libdaplofa.so.2}).
     */
    default Set<String> libraryAliases() {
        return Set.of();
    }

    /** Whether the provider's objects are safe to use from several threads. */
    boolean threadSafe();

    /**
     * The IAs the provider offers without any dat.conf entry (e.g. {@code emu0}, or one per device
     * port); the registry lists and opens them when no entry names them.
     */
    List<IaSpec> defaultIas();

    /**
     * What the provider as a whole can do now, for listings: for example which devices it found, or
     * why it can open nothing (no library, no device). The default reports nothing in particular.
     */
    default ProviderStatus status() {
        return ProviderStatus.ok("");
    }

    /** Whether the provider can serve an entry's {@code ia_params} now, and if not why. */
    ProviderStatus check(IaSpec spec);

    /**
     * Opens an IA for {@code dat_ia_open}.
     *
     * @throws DatException INVALID_PARAMETER for ia_params the provider cannot parse;
     *         INSUFFICIENT_RESOURCES (RESOURCE_DEVICE) if the device is absent
     */
    InterfaceAdapter open(IaSpec spec, int asyncEvdMinQlen);

    /**
     * Breaks an IA this provider opened because the provider is leaving: an
     * ASYNC_ERROR_IA_CATASTROPHIC event on its asynchronous EVD, connections broken (BROKEN events,
     * DTOs flushed), and then every handle of the IA fails INVALID_HANDLE. Threads and native
     * resources of the IA are released. An IA already closed is left alone.
     */
    void abort(InterfaceAdapter ia, String reason);

    /** How many objects of each kind are open now, across all IAs (for leak checks). */
    Map<HandleType, Integer> openObjects();
}
