package org.jdapl.karaf.commands;

import java.util.List;
import java.util.Map;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.jdapl.dat.management.IaCountersMXBean;

/**
 * {@code dat:counters [--reset] [--no-format] [IA ...]}: the counters of the IAs open through the
 * registry (the {@link IaCountersMXBean} services it publishes for the JMX whiteboard), one row per
 * counter with OFED's DCNT_* name; {@code --reset} zeroes them after printing.
 */
@Service
@Command(scope = "dat", name = "counters", description = "Shows the counters of the open IAs (OFED's DCNT_* names)")
public class ShowCounters implements Action {
    @Reference(optional = true)
    List<IaCountersMXBean> ias;

    @Argument(index = 0, name = "ia", description = "The IA names to show (all open IAs if none)", multiValued = true)
    @Completion(IaNameCompleter.class)
    List<String> names;

    @Option(name = "--reset", description = "Zero the counters after printing them")
    boolean reset;

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Override
    public Object execute() {
        ShellTable table = new ShellTable();
        table.column("IA Name");
        table.column("Provider");
        table.column("Counter");
        table.column("Value").alignRight();
        table.emptyTableText("no open IA");
        for (IaCountersMXBean ia : ias == null ? List.<IaCountersMXBean>of() : ias) {
            if (names != null && !names.isEmpty() && !names.contains(ia.getIaName())) {
                continue;
            }
            Map<String, Long> counters = ia.getCounters();
            if (reset) {
                ia.reset();
            }
            if (counters.isEmpty()) {
                table.addRow().addContent(ia.getIaName(), ia.getProvider(), "-", "the provider does not count");
            }
            counters.forEach((name, value) -> table.addRow().addContent(ia.getIaName(), ia.getProvider(), name, value));
        }
        table.print(System.out, !noFormat);
        return null;
    }
}
