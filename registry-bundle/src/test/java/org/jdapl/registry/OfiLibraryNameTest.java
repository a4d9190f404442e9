package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** REG_05: a dat.conf line naming libdaplofi.so.2 is listed as the libfabric provider's, also while it is absent. */
class OfiLibraryNameTest {
    @TempDir
    Path dir;

    @Test
    void REG_05_libdaplofiLinesBelongToTheOfiProvider() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                ofi-v2-tcp-lo u2.0 nonthreadsafe default libdaplofi.so.2 dapl.2.0 "tcp lo" ""
                """);
        String[] lines = new DatCommands(registry).listText().split("\\n");
        assertEquals(2, lines.length, String.join("\n", lines));
        assertTrue(lines[1].startsWith("ofi-v2-tcp-lo ") && lines[1].contains("ofi (libdaplofi.so.2)")
                && lines[1].contains("absent"), lines[1]);
    }
}
