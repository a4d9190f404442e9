package org.jdapl.karaf.commands;

import java.util.List;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.ProviderStatus;

/**
 * {@code dat:providers}: the providers present (DatProvider services), the IAs each has open and
 * what each says of itself (e.g. why it can open nothing), as Karaf's own listings print them.
 */
@Service
@Command(scope = "dat", name = "providers", description = "Lists the providers present, their open IAs and their status")
public class ListProviders implements Action {
    @Reference
    List<DatProvider> providers;

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Override
    public Object execute() {
        ShellTable table = new ShellTable();
        table.column("Provider");
        table.column("Version");
        table.column("Open IAs").alignRight();
        table.column("Status");
        table.column("Reason");
        table.emptyTableText("no provider present");
        for (DatProvider p : providers) {
            ProviderStatus status = p.status();
            table.addRow().addContent(p.name(), p.version(), p.openObjects().getOrDefault(HandleType.IA, 0),
                    status.canServe() ? "OK" : "cannot serve", status.reason());
        }
        table.print(System.out, !noFormat);
        return null;
    }
}
