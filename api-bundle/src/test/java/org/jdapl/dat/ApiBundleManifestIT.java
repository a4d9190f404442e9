package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** The packaged API bundle: it exports the three API packages with versions, requires JavaSE 25, and nothing else. */
class ApiBundleManifestIT {
    private static Attributes manifest() throws IOException {
        String jar = System.getProperty("jdapl.bundle.jar");
        assertNotNull(jar, "jdapl.bundle.jar is not set");
        try (JarFile file = new JarFile(jar)) {
            return file.getManifest().getMainAttributes();
        }
    }

    @Test
    void exportsExactlyTheApiAndSpiPackagesWithVersions() throws IOException {
        String exports = manifest().getValue("Export-Package");
        List<String> packages = Arrays.stream(exports.split(",(?=[a-z])"))
                .map(clause -> clause.split(";")[0].trim()).sorted().toList();
        assertEquals(List.of("org.jdapl.dat", "org.jdapl.dat.management", "org.jdapl.dat.spi"), packages);
        assertTrue(exports.contains("org.jdapl.dat.management;version=\"1.0.0\""), exports);
        assertTrue(exports.contains("org.jdapl.dat;version=\"1.4.0\""), exports);
        assertTrue(exports.contains("org.jdapl.dat.spi;version=\"1.1.0\""), exports);
    }

    @Test
    void requiresJavaSe25AndNoActivator() throws IOException {
        Attributes m = manifest();
        assertEquals("(&(osgi.ee=JavaSE)(version=25))",
                m.getValue("Require-Capability").replaceAll(".*filter:=\"([^\"]*)\".*", "$1"));
        assertEquals("org.jdapl.api", m.getValue("Bundle-SymbolicName"));
        assertNull(m.getValue("Bundle-Activator"));
        String imports = m.getValue("Import-Package");
        assertTrue(imports == null || !imports.contains("java."), "java.* is not imported: " + imports);
    }
}
