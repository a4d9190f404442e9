package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Set;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;

import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.management.IaCountersNames;
import org.jdapl.provider.emu.EmuProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The counters of IAs opened through the registry, where operators look: one MXBean per open IA in
 * the platform MBean server (withdrawn once the IA is closed), and {@code dat:counters}.
 */
class IaCountersJmxTest {
    @TempDir
    Path dir;

    private static long counter(MBeanServer server, ObjectName name, String counter) throws Exception {
        TabularData table = (TabularData) server.getAttribute(name, "Counters");
        CompositeData row = table.get(new Object[] {counter});
        return row == null ? -1 : (Long) row.get("value");
    }

    @Test
    void eachOpenIaIsAnMBeanWithItsCountersAndDatCountersPrintsAndResetsThem() throws Exception {
        ProviderRegistry registry = Registries.withDatConf(dir, "");
        EmuProvider emu = new EmuProvider();
        registry.addProvider(emu);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> before = server.queryNames(IaCountersNames.pattern(), null);
        InterfaceAdapter ia = registry.open("emu0", 8);
        try {
            ia.createPz();
            ia.createPz();
            Set<ObjectName> names = server.queryNames(IaCountersNames.pattern(), null);
            names.removeAll(before);
            assertEquals(1, names.size(), names.toString());
            ObjectName name = names.iterator().next();
            assertEquals("org.jdapl", name.getDomain());
            assertEquals("\"emu0\"", name.getKeyProperty("name"));
            assertEquals("emu0", server.getAttribute(name, "IaName"));
            assertEquals("emu", server.getAttribute(name, "Provider"));
            assertEquals(true, server.getAttribute(name, "Counting"));
            assertEquals(2L, counter(server, name, "DCNT_IA_PZ_CREATE"));
            assertEquals(0L, counter(server, name, "DCNT_EP_POST_SEND"));
            assertEquals(0L, counter(server, name, "DCNT_EVD_DEQUEUE"));

            DatCommands commands = new DatCommands(registry);
            String text = commands.countersText("emu0");
            assertTrue(text.startsWith("IA NAME"), text);
            assertTrue(text.lines().anyMatch(l -> l.matches("emu0\\s+emu\\s+DCNT_IA_PZ_CREATE\\s+2")), text);
            String tabs = commands.countersText("--no-format", "--reset", "emu0");
            assertTrue(tabs.contains("emu0\temu\tDCNT_IA_PZ_CREATE\t2\n"), tabs);
            assertEquals(0L, counter(server, name, "DCNT_IA_PZ_CREATE"), "after dat:counters --reset");
            assertEquals("no open IA named nothing-here\n", commands.countersText("nothing-here"));

            ia.close();
            assertTrue(commands.countersText().startsWith("no open IA"), "a closed IA is withdrawn");
            assertFalse(server.isRegistered(name), "the closed IA's MBean is unregistered");
        } finally {
            ia.close();
            registry.removeProvider(emu);
        }
    }
}
