package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
        String[] lines = commands.listText().split("\n");
        assertEquals(4, lines.length, commands.listText());
        assertTrue(lines[0].startsWith("IA NAME") && lines[0].contains("PROVIDER") && lines[0].contains("STATUS"));
        // The reason has a column of its own, headed REASON, starting where the header says.
        int reason = lines[0].indexOf("REASON");
        assertTrue(reason > lines[0].indexOf("STATUS"), lines[0]);
        assertEquals("OPENABLE", lines[1].substring(lines[0].indexOf("STATUS"), reason).strip(), lines[1]);
        assertTrue(lines[1].substring(reason).startsWith("ok"), lines[1]);
        assertTrue(lines[1].startsWith("emu1 ") && lines[1].contains("OPENABLE") && lines[1].contains("dat.conf:1"));
        assertTrue(lines[2].contains("ofa (libdaplofa.so.2)") && lines[2].contains("absent")
                && lines[2].contains("nonthreadsafe"), lines[2]);
        assertTrue(lines[3].startsWith("emu0 ") && lines[3].contains("provider default (emu)"), lines[3]);
        String source = commands.sourceText();
        assertTrue(source.contains("system property dat.conf") && source.contains("1 line skipped"), source);
        assertTrue(source.contains("skipped: ") && source.contains("dat.conf:3: has 4 fields"), source);

        InterfaceAdapter ia = registry.open("emu0", 4);
        assertEquals("emu: 1 IA open\n", commands.providersText());
        ia.close();
        assertTrue(commands.reloadText().contains("2 entries"));
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
                new DatCommands(registry).providersText());
    }

    /**
     * The commands write their text and return nothing, so that a command channel that does not
     * print results (Karaf's SSH exec channel: bin/client, ssh host COMMAND) shows it too.
     */
    @Test
    void commandsWriteTheirTextToStandardOutput() throws Exception {
        ProviderRegistry registry = Registries.withDatConf(dir, "emu1 u2.0 threadsafe default emu emu.1.0 loopback \"\"\n");
        registry.addProvider(TestProvider.withDefault("emu", "emu0", "loopback"));
        DatCommands commands = new DatCommands(registry);
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            for (String name : List.of("list", "source", "providers", "reload")) {
                Object result = DatCommands.class.getMethod(name).invoke(commands);
                assertEquals(null, result, "dat:" + name + " returned its text instead of writing it");
            }
        } finally {
            System.setOut(saved);
        }
        String printed = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(printed.startsWith("IA NAME") && printed.contains("emu1 "), printed);
        assertTrue(printed.contains("system property dat.conf") && printed.contains("emu: 0 IAs open"), printed);
    }
}
