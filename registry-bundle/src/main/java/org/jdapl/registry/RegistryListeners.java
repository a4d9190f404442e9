package org.jdapl.registry;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jdapl.dat.RegistryEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of a registry: each added once, told in the order added; one that throws is
 * logged and the others are still told. Thread safe; telling takes no lock.
 */
final class RegistryListeners {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryListeners.class);

    private final List<Consumer<? super RegistryEvent>> listeners = new CopyOnWriteArrayList<>();

    void add(Consumer<? super RegistryEvent> listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (listeners) {
            if (!listeners.contains(listener)) {
                listeners.add(listener);
            }
        }
    }

    void remove(Consumer<? super RegistryEvent> listener) {
        listeners.remove(listener);
    }

    void tell(RegistryEvent event) {
        for (Consumer<? super RegistryEvent> listener : listeners) {
            try {
                listener.accept(event);
            } catch (RuntimeException e) {
                LOG.warn("registry listener {} failed on {}", listener, event, e);
            }
        }
    }
}
