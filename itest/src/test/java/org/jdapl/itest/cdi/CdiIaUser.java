package org.jdapl.itest.cdi;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.event.Observes;
import javax.enterprise.inject.Instance;
import javax.inject.Inject;
import org.jdapl.cdi.Ia;
import org.jdapl.cdi.IaScope;
import org.jdapl.conformance.CaseResult;
import org.jdapl.conformance.ConformanceKit;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RegistryEvent;
import org.osgi.service.cdi.annotations.Service;

/**
 * The bean of the CDI bundle CdiIT deploys (under the OSGi CDI Integration): an application IA
 * {@code emu0} and dependent ones for a part of the conformance kit, all injected by jdapl's
 * extension, and an observer of the registry's events. Published as a {@code Function} service
 * that the test calls: {@code ia} (uses the application IA), {@code kit}, {@code events}.
 */
@ApplicationScoped
@Service
public class CdiIaUser implements Function<String, String> {
    /** The part of the kit run through injected IAs. */
    static final Set<String> KIT = Set.of("CONN_01", "CONN_02", "CONN_03", "CONN_04", "DISC_01", "OBJ_01");

    @Inject
    @Ia("emu0")
    InterfaceAdapter ia;

    @Inject
    @Ia(value = "emu0", scope = IaScope.DEPENDENT)
    Instance<InterfaceAdapter> fresh;

    private final List<String> heard = new CopyOnWriteArrayList<>();

    void heard(@Observes RegistryEvent event) {
        String what = event.getClass().getSimpleName() + " " + event.provider();
        heard.add(event instanceof RegistryEvent.IaBroken broken ? what + " " + broken.iaName() : what);
    }

    @Override
    public String apply(String command) {
        return switch (command) {
            case "ia" -> ia.name() + " " + ia.query().attributes().address();
            case "kit" -> kit();
            case "events" -> String.join(";", heard);
            default -> throw new IllegalArgumentException(command);
        };
    }

    private String kit() {
        try (InjectedPairs fixture = new InjectedPairs(fresh)) {
            return ConformanceKit.cases().stream().filter(c -> KIT.contains(c.id()))
                    .map(c -> ConformanceKit.runCase(c, fixture)).map(CaseResult::reportLine)
                    .collect(Collectors.joining("\n"));
        }
    }
}
