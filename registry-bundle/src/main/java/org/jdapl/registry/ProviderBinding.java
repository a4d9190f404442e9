package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A provider the registry has bound, with the IAs opened through it (its reference count). All
 * fields are guarded by the registry's lock.
 */
final class ProviderBinding {
    private static final Logger LOG = LoggerFactory.getLogger(ProviderBinding.class);

    final DatProvider provider;
    final String name;
    private final List<InterfaceAdapter> openIas = new ArrayList<>();
    private boolean removed;

    ProviderBinding(DatProvider provider, String name) {
        this.provider = provider;
        this.name = name;
    }

    /** Counts an IA opened through the provider; false if the provider has been removed meanwhile. */
    boolean track(InterfaceAdapter ia) {
        if (removed) {
            return false;
        }
        prune();
        openIas.add(ia);
        return true;
    }

    /** The number of IAs opened through the provider and not closed yet. */
    int openCount() {
        prune();
        return openIas.size();
    }

    /** Marks the binding removed and hands over the IAs still open, which it forgets. */
    List<InterfaceAdapter> remove() {
        removed = true;
        prune();
        List<InterfaceAdapter> open = List.copyOf(openIas);
        openIas.clear();
        return open;
    }

    boolean removed() {
        return removed;
    }

    /**
     * Has the provider break an IA it opened ({@link DatProvider#abort}); a failure is logged, also a
     * {@link LinkageError} from an updated and refreshed provider bundle (REG_06).
     */
    void abortQuietly(InterfaceAdapter ia, String reason) {
        try {
            provider.abort(ia, reason);
        } catch (RuntimeException | LinkageError e) {
            LOG.warn("provider {} failed to abort IA {}", name, iaName(ia), e);
        }
    }

    /** An IA's name, or what it prints as if it cannot say. */
    static String iaName(InterfaceAdapter ia) {
        try {
            return ia.name();
        } catch (RuntimeException e) {
            return String.valueOf(ia);
        }
    }

    /** The library names the provider answers to besides its own, or none if it cannot say. */
    Set<String> aliases() {
        try {
            Set<String> aliases = provider.libraryAliases();
            return aliases == null ? Set.of() : aliases;
        } catch (RuntimeException e) {
            LOG.warn("provider {} failed libraryAliases()", name, e);
            return Set.of();
        }
    }

    /** The IAs the provider offers without a dat.conf, or none if it cannot say. */
    List<IaSpec> defaultIas() {
        try {
            List<IaSpec> specs = provider.defaultIas();
            return specs == null ? List.of() : specs.stream().filter(Objects::nonNull).toList();
        } catch (RuntimeException e) {
            LOG.warn("provider {} failed defaultIas()", name, e);
            return List.of();
        }
    }

    /** A provider's name, or its class name if it cannot say. */
    static String name(DatProvider provider) {
        try {
            return provider.name();
        } catch (RuntimeException e) {
            return provider.getClass().getName();
        }
    }

    /** A provider's version, or {@code unknown} if it cannot say. */
    static String version(DatProvider provider) {
        try {
            return String.valueOf(provider.version());
        } catch (RuntimeException e) {
            return "unknown";
        }
    }

    /** Forgets IAs their consumers have closed (the provider freed them). */
    private void prune() {
        openIas.removeIf(ProviderBinding::isClosed);
    }

    private static boolean isClosed(InterfaceAdapter ia) {
        try {
            return ia.isFreed();
        } catch (RuntimeException e) {
            LOG.warn("IA {} failed isFreed(); counted as closed", ia, e);
            return true;
        }
    }
}
