package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;

/**
 * The packaged jars: the production bundle holds none of the test hooks (OfaFaults, FaultHooks, the
 * device tests' IaLocks) and exports nothing; the {@code faults} jar is the fragment that holds the
 * fault hooks and exports their package.
 */
class OfaBundleContentsIT {
    private static String jar(String property) {
        String jar = System.getProperty(property);
        assertNotNull(jar, property + " is not set");
        return jar;
    }

    private static List<String> entries(JarFile file) {
        return file.stream().map(ZipEntry::getName).filter(n -> n.endsWith(".class")).toList();
    }

    @Test
    void productionBundleHasNoTestHooks() throws IOException {
        try (JarFile file = new JarFile(jar("jdapl.bundle.jar"))) {
            List<String> classes = entries(file);
            assertTrue(classes.contains("org/jdapl/provider/ofa/OfaProvider.class"), "not the provider's jar");
            List<String> hooks = classes.stream().filter(n -> n.contains("/faults/") || n.contains("Fault")
                    || n.contains("IaLocks")).toList();
            assertEquals(List.of(), hooks, "test hooks in the production bundle");
            Attributes m = file.getManifest().getMainAttributes();
            assertEquals("org.jdapl.provider.ofa", m.getValue("Bundle-SymbolicName"));
            String exports = m.getValue("Export-Package");
            assertTrue(exports == null || !exports.contains("faults"), "the bundle exports " + exports);
        }
    }

    @Test
    void faultsJarIsAFragmentWithTheHooksOnly() throws IOException {
        try (JarFile file = new JarFile(jar("jdapl.faults.jar"))) {
            assertEquals(List.of("org/jdapl/provider/ofa/FaultHooks.class",
                    "org/jdapl/provider/ofa/faults/OfaFaults.class"), entries(file).stream().sorted().toList());
            Attributes m = file.getManifest().getMainAttributes();
            assertEquals("org.jdapl.provider.ofa", m.getValue("Fragment-Host"));
            assertEquals("org.jdapl.provider.ofa.faults;version=\"0.1.0\"", m.getValue("Export-Package"));
        }
    }
}
