package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.spi.ProviderStatus;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Shell commands for operators (Apache Felix Gogo, scope {@code dat}): {@code dat:list} prints the
 * registry's IAs as a table, {@code dat:source} the configuration in effect and the skipped lines,
 * {@code dat:providers} the providers present with their open IAs, {@code dat:reload} reads dat.conf
 * again, {@code dat:counters [--reset] [--no-format] [IA...]} the counters of the open IAs. Each writes its text to standard output (the session's, in a Gogo shell) and returns
 * nothing: a command channel that does not print results (Karaf's SSH {@code exec} channel, so
 * {@code bin/client} and {@code ssh host COMMAND}) shows the text as a console does.
 */
@Component(service = DatCommands.class, property = {"osgi.command.scope=dat", "osgi.command.function=list",
    "osgi.command.function=source", "osgi.command.function=providers", "osgi.command.function=reload",
    "osgi.command.function=counters"})
public class DatCommands {
    private final DatRegistry registry;

    /** Commands over the registry service. */
    @Activate
    public DatCommands(@Reference DatRegistry registry) {
        this.registry = registry;
    }

    /** {@code dat:list}: every IA the registry knows, whether it can be opened, and why (not). */
    public void list() {
        print(listText());
    }

    /** {@code dat:source}: where the entries come from, and what was skipped. */
    public void source() {
        print(sourceText());
    }

    /** {@code dat:providers}: the providers present, their open IAs, what each says of itself. */
    public void providers() {
        print(providersText());
    }

    /** {@code dat:reload}: reads dat.conf again and says what is in effect. */
    public void reload() {
        print(reloadText());
    }

    /**
     * {@code dat:counters [--reset] [--no-format] [IA...]}: the counters of the IAs open through the
     * registry (all, or those named), OFED's DCNT_* names and values; {@code --reset} zeroes them after
     * printing them, {@code --no-format} separates the columns by tabs.
     */
    public void counters(String... args) {
        print(countersText(args));
    }

    String countersText(String... args) {
        if (!(registry instanceof ProviderRegistry r)) {
            return "counters are not available from " + registry.getClass().getName() + "\n";
        }
        List<String> names = new ArrayList<>();
        boolean reset = false;
        boolean aligned = true;
        for (String a : args) {
            switch (a) {
                case "--reset" -> reset = true;
                case "--no-format" -> aligned = false;
                default -> names.add(a);
            }
        }
        return CounterTable.format(r.monitor.live(), names, reset, aligned);
    }

    private static void print(String text) {
        System.out.print(text);
        System.out.flush();
    }

    String listText() {
        return RegistryTable.format(registry.entries());
    }

    String sourceText() {
        StringBuilder sb = new StringBuilder(registry.configurationSource()).append('\n');
        if (registry instanceof ProviderRegistry r) {
            for (String problem : r.problems()) {
                sb.append("  skipped: ").append(problem).append('\n');
            }
        }
        return sb.toString();
    }

    /** The providers present, how many IAs each has open, and what each says of itself (e.g. why it can open nothing). */
    String providersText() {
        if (!(registry instanceof ProviderRegistry r)) {
            return "provider details are not available from " + registry.getClass().getName() + "\n";
        }
        Map<String, Integer> counts = r.openCounts();
        if (counts.isEmpty()) {
            return "no provider present\n";
        }
        Map<String, ProviderStatus> statuses = r.statuses();
        StringBuilder sb = new StringBuilder();
        counts.forEach((name, open) -> {
            sb.append(name).append(": ").append(open).append(" IA").append(open == 1 ? "" : "s").append(" open");
            ProviderStatus status = statuses.get(name);
            if (status != null && !status.reason().isEmpty()) {
                sb.append("; ").append(status.reason());
            }
            sb.append('\n');
        });
        return sb.toString();
    }

    String reloadText() {
        if (!(registry instanceof ProviderRegistry r)) {
            return "reload is not available for " + registry.getClass().getName() + "\n";
        }
        r.reload();
        return sourceText();
    }
}
