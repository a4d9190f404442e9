package org.jdapl.karaf.commands;

import java.util.List;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.RegistryEntry;

/**
 * {@code dat:list [IA ...]}: the IAs the registry knows (dat_registry_list_providers with the
 * reasons), one row each, as Karaf's own listings print them.
 */
@Service
@Command(scope = "dat", name = "list", description = "Lists the IAs the registry knows, whether each can be opened, and why (not)")
public class ListIas implements Action {
    @Reference
    DatRegistry registry;

    @Argument(index = 0, name = "ia", description = "The IA names to list (all if none)", multiValued = true)
    @Completion(IaNameCompleter.class)
    List<String> names;

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Override
    public Object execute() {
        ShellTable table = new ShellTable();
        table.column("IA Name");
        table.column("API");
        table.column("Provider");
        table.column("Threads");
        table.column("Source");
        table.column("Status");
        table.column("Reason");
        table.emptyTableText("no IA");
        for (RegistryEntry e : registry.entries()) {
            if (names != null && !names.isEmpty() && !names.contains(e.iaName())) {
                continue;
            }
            String provider = e.provider() == null ? "-" : e.provider();
            if (!e.libPath().equals(e.provider())) {
                provider += " (" + e.libPath() + ")";
            }
            table.addRow().addContent(e.iaName(), e.apiVersion() + (e.isDefault() ? "" : " nondefault"), provider,
                    e.threadSafe() ? "threadsafe" : "nonthreadsafe", e.source(),
                    e.openable() ? "OPENABLE" : e.present() ? "present" : "absent", e.status());
        }
        table.print(System.out, !noFormat);
        return null;
    }
}
