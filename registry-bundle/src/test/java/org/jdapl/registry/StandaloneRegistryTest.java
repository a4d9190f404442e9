package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.registry.conf.DatConfLocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/** The registry without OSGi: DatRegistry.standalone() and ServiceLoader discovery of providers. */
class StandaloneRegistryTest {
    @TempDir
    Path dir;

    @Test
    @ResourceLock(Resources.SYSTEM_PROPERTIES)
    void standaloneFindsTheRegistryAndServiceLoadedProviders() {
        Path file = Registries.write(dir.resolve("dat.conf"),
                "svc-alias u2.0 threadsafe default libdaplsvc.so.2 dapl.2.0 \"tcp 127.0.0.1:0\" \"\"\n");
        String before = System.getProperty(DatConfLocator.SYSTEM_PROPERTY);
        System.setProperty(DatConfLocator.SYSTEM_PROPERTY, file.toString());
        try {
            DatRegistry registry = DatRegistry.standalone();
            StandaloneRegistry standalone = assertInstanceOf(StandaloneRegistry.class, registry);
            assertTrue(registry.configurationSource().contains(file.toString()), registry.configurationSource());
            try (InterfaceAdapter ia = registry.open("svc0", 4)) {
                assertEquals("loopback", ((TestIa) ia).spec().iaParams());
                assertEquals(1, standalone.openCount("svc"));
            }
            try (InterfaceAdapter ia = registry.open("svc-alias", 4)) {
                assertEquals("tcp 127.0.0.1:0", ((TestIa) ia).spec().iaParams());
            }
            assertEquals(0, standalone.openCount("svc"));
        } finally {
            if (before == null) {
                System.clearProperty(DatConfLocator.SYSTEM_PROPERTY);
            } else {
                System.setProperty(DatConfLocator.SYSTEM_PROPERTY, before);
            }
        }
    }
}
