package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.ProviderStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Gogo commands' output. */
class DatCommandsTest {
    @TempDir
    Path dir;

    @Test
    void listShowsATableAndSourceShowsSkippedLines() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                emu1 u2.0 threadsafe default emu emu.1.0 loopback ""
                ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
                not a dat.conf line
                """);
        registry.addProvider(TestProvider.withDefault("emu", "emu0", "loopback"));
        DatCommands commands = new DatCommands(registry);
        String[] lines = commands.list().split("\n");
        assertEquals(4, lines.length, commands.list());
        assertTrue(lines[0].startsWith("IA NAME") && lines[0].contains("PROVIDER") && lines[0].contains("STATUS"));
        assertTrue(lines[1].startsWith("emu1 ") && lines[1].contains("OPENABLE") && lines[1].contains("dat.conf:1"));
        assertTrue(lines[2].contains("ofa (libdaplofa.so.2)") && lines[2].contains("absent")
                && lines[2].contains("nonthreadsafe"), lines[2]);
        assertTrue(lines[3].startsWith("emu0 ") && lines[3].contains("provider default (emu)"), lines[3]);
        String source = commands.source();
        assertTrue(source.contains("system property dat.conf") && source.contains("1 line skipped"), source);
        assertTrue(source.contains("skipped: ") && source.contains("dat.conf:3: has 4 fields"), source);

        InterfaceAdapter ia = registry.open("emu0", 4);
        assertEquals("emu: 1 IA open\n", commands.providers());
        ia.close();
        assertTrue(commands.reload().contains("2 entries"));
    }

    @Test
    void providersShowWhatEachProviderSaysOfItself() {
        ProviderRegistry registry = Registries.withDatConf(dir, "");
        registry.addProvider(new TestProvider("ofa", Set.of(), true, List.of(), spec -> false) {
            @Override
            public ProviderStatus status() {
                return ProviderStatus.cannot("no RDMA device (ibv_get_device_list found none)");
            }
        });
        assertEquals("ofa: 0 IAs open; no RDMA device (ibv_get_device_list found none)\n",
                new DatCommands(registry).providers());
    }
}
