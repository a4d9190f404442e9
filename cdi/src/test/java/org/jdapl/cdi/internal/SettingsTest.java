package org.jdapl.cdi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The registry configuration read from properties (MicroProfile Config's names or system properties). */
class SettingsTest {
    @Test
    void datConfAndIaDeclarationsMapOntoTheRegistrysProperties() {
        Map<String, String> source = Map.of("jdapl.dat.conf", "/tmp/x.conf",
                "jdapl.ia.a", "u2.0 threadsafe default emu emu.1.0 \"loopback\" \"\"",
                "jdapl.ia.", "no name", "dat.conf", "read by the registry itself", "other", "ignored");
        assertEquals(Map.of("dat.conf", "/tmp/x.conf", "ia.a", "u2.0 threadsafe default emu emu.1.0 \"loopback\" \"\""),
                Settings.translate(source.keySet(), name -> Optional.ofNullable(source.get(name))));
    }

    @Test
    void aBlankDatConfIsUnset() {
        assertEquals(Map.of(), Settings.translate(java.util.List.of("jdapl.dat.conf"), name -> Optional.of(" ")));
    }
}
