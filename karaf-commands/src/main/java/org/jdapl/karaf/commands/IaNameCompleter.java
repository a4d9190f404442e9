package org.jdapl.karaf.commands;

import java.util.List;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.RegistryEntry;

/** Completes IA names: every name the registry lists (dat.conf, configurations, provider defaults). */
@Service
public class IaNameCompleter implements Completer {
    @Reference
    DatRegistry registry;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        StringsCompleter names = new StringsCompleter();
        for (RegistryEntry e : registry.entries()) {
            names.getStrings().add(e.iaName());
        }
        return names.complete(session, commandLine, candidates);
    }
}
