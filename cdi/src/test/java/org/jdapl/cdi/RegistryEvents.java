package org.jdapl.cdi;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdapl.dat.RegistryEvent;

/** An observer of every registry event, keeping what it heard. */
@ApplicationScoped
public class RegistryEvents {
    private final List<RegistryEvent> heard = new CopyOnWriteArrayList<>();

    void heard(@Observes RegistryEvent event) {
        heard.add(event);
    }

    List<RegistryEvent> heard() {
        return List.copyOf(heard);
    }
}
