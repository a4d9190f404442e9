package org.jdapl.registry;

import java.util.List;
import java.util.Set;
import org.jdapl.dat.spi.IaSpec;

/** A test provider found by ServiceLoader (src/test/resources/META-INF/services): {@code svc}, IA {@code svc0}. */
public final class ServiceLoadedProvider extends TestProvider {
    /** The ServiceLoader constructor. */
    public ServiceLoadedProvider() {
        super("svc", Set.of("libdaplsvc.so.2"), true, List.of(new IaSpec("svc0", "loopback", "", true, "svc")),
                spec -> true);
    }
}
