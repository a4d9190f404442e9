package org.jdapl.registry.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lookup order: configuration, system property, DAT_OVERRIDE, default file, built-in. */
class DatConfLocatorTest {
    @TempDir
    Path dir;

    private DatConfLocator locator(Map<String, String> env, Map<String, String> properties) {
        return new DatConfLocator(env::get, properties::get, dir.resolve("default.conf"));
    }

    @Test
    void configurationBeatsSystemPropertyBeatsEnvironmentBeatsDefaultFile() throws IOException {
        Files.writeString(dir.resolve("default.conf"), "");
        Map<String, String> env = Map.of("DAT_OVERRIDE", "/env.conf");
        Map<String, String> props = Map.of("dat.conf", "/prop.conf");
        ConfSource s = locator(env, props).locate(Map.of("dat.conf", "/cfg.conf"));
        assertEquals(Path.of("/cfg.conf"), s.file());
        assertTrue(s.explicit());
        assertTrue(s.origin().contains("configuration org.jdapl.registry"));
        assertEquals(Path.of("/prop.conf"), locator(env, props).locate(Map.of()).file());
        assertEquals("system property dat.conf", locator(env, props).locate(Map.of()).origin());
        assertEquals(Path.of("/env.conf"), locator(env, Map.of()).locate(Map.of()).file());
        assertEquals("DAT_OVERRIDE", locator(env, Map.of()).locate(null).origin());
        ConfSource fallback = locator(Map.of(), Map.of()).locate(Map.of("dat.conf", "  "));
        assertEquals(dir.resolve("default.conf"), fallback.file());
        assertFalse(fallback.explicit());
    }

    @Test
    void noFileAnywhereIsTheBuiltInDefault() {
        ConfSource s = locator(Map.of("DAT_OVERRIDE", ""), Map.of()).locate(Map.of());
        assertTrue(s.builtIn());
        assertTrue(s.toString().startsWith("built-in default"), s.toString());
    }

    @Test
    void invalidPathIsAnExplicitErrorNotAFallback() {
        ConfSource s = locator(Map.of("DAT_OVERRIDE", "bad\0path"), Map.of()).locate(Map.of());
        assertFalse(s.builtIn());
        assertTrue(s.explicit());
        assertNotNull(s.invalidPath());
        assertTrue(s.invalidPath().contains("bad?path"), s.invalidPath());
    }
}
