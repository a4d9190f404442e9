package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.List;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;

/**
 * The provider without libfabric (a JVM of its own that loads a library of a name that does not
 * exist): it stays registered, offers no IA, says why in its status and check, and open fails
 * INSUFFICIENT_RESOURCES / RESOURCE_DEVICE. And {@code ia_params} parsing, and what it says with
 * libfabric but without the requested provider or domain.
 */
class OfiWithoutLibfabricTest {
    @Test
    void REG_05_withoutLibfabricTheProviderOpensNothingAndSaysWhy() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        OfiHost.Result r = OfiHost.run(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-Djdapl.ofi.library=libfabric-absent.so.1", "-cp", System.getProperty("java.class.path"),
                WithoutLibfabricMain.class.getName()), 60);
        assertEquals(0, r.exit(), r.output());
        String out = r.output();
        assertTrue(out.contains("status: false libfabric-absent.so.1 cannot be loaded"), out);
        assertTrue(out.contains("install libfabric1 (scripts/ofi/install-host-packages.sh runtime)"), out);
        assertTrue(out.contains("defaults: 0"), out);
        assertTrue(out.contains("check: false libfabric-absent.so.1 cannot be loaded"), out);
        assertTrue(out.contains("open: INSUFFICIENT_RESOURCES RESOURCE_DEVICE"), out);
    }

    @Test
    void iaParamsNameTheLibfabricProviderAndDomain() {
        assertEquals(new OfiIaParams("tcp", "lo"), OfiIaParams.parse("tcp lo"));
        assertEquals(new OfiIaParams("verbs", null), OfiIaParams.parse(" verbs "));
        DatException e = assertThrows(DatException.class, () -> OfiIaParams.parse("tcp lo extra"));
        assertEquals(DatReturnType.INVALID_PARAMETER, e.type());
        assertThrows(DatException.class, () -> OfiIaParams.parse(""));
    }

    @Test
    void REG_05_anAbsentProviderOrDomainIsNamedInTheCheck() {
        String missing = OfiHost.ensure("runtime");
        assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        assertTrue(p.status().canServe(), p.status().reason());
        assertTrue(p.status().reason().contains("tcp lo"), p.status().reason());
        assertTrue(p.defaultIas().stream().anyMatch(s -> s.iaName().equals("ofi-v2-tcp-lo")), p.defaultIas().toString());
        var none = p.check(new IaSpec("x", "nosuchprovider lo", "", true, "test"));
        assertFalse(none.canServe());
        assertTrue(none.reason().contains("nosuchprovider"), none.reason());
        var dom = p.check(new IaSpec("x", "tcp nosuchdomain0", "", true, "test"));
        assertFalse(dom.canServe(), dom.reason());
        DatException e = assertThrows(DatException.class,
                () -> p.open(new IaSpec("x", "tcp nosuchdomain0", "", true, "test"), 8));
        assertEquals(DatReturnType.INSUFFICIENT_RESOURCES, e.type());
    }
}
