package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ServiceLoader;
import java.util.Set;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.ProviderStatus;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.junit.jupiter.api.Test;

/** The provider on a machine without RDMA devices: registered, opens nothing, says why, never crashes. */
class OfaProviderWithoutDeviceTest {
    private final OfaProvider provider = new OfaProvider();

    private static void assumeNoDevice() {
        assumeTrue(Verbs.unavailableReason() != null || Verbs.get().deviceNames().isEmpty(),
                "this machine has an RDMA device; the device tests cover it");
    }

    @Test
    void isFoundByServiceLoaderWithItsNamesAndAliases() {
        DatProvider p = ServiceLoader.load(DatProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(x -> x.name().equals("ofa")).findFirst().orElseThrow();
        assertEquals(Set.of("libdaplofa.so.2", "libdaploscm.so.2", "libdaploucm.so.2"), p.libraryAliases());
        assertEquals(OfaProvider.VERSION, p.version());
        assertTrue(p.threadSafe());
    }

    @Test
    void withoutDevicesItOffersNoIaAndOpenFailsResourceDevice() {
        assumeNoDevice();
        assertTrue(provider.defaultIas().isEmpty());
        ProviderStatus overall = provider.status();
        assertFalse(overall.canServe());
        assertTrue(overall.reason().contains("no RDMA device") || overall.reason().contains("not available"),
                overall.reason());
        for (String params : new String[] {"mlx4_0 1", "ib0 0", "192.168.77.1 0"}) {
            IaSpec spec = new IaSpec("ofa-v2-x", params, "", true, "test");
            ProviderStatus status = provider.check(spec);
            assertFalse(status.canServe());
            assertTrue(status.reason().contains("no RDMA device") || status.reason().contains("not available"),
                    status.reason());
            DatException e = assertThrows(DatException.class, () -> provider.open(spec, 8));
            assertEquals(DatReturnType.INSUFFICIENT_RESOURCES, e.type());
            assertEquals(DatReturnSubtype.RESOURCE_DEVICE, e.subtype());
        }
        assertTrue(provider.openObjects().isEmpty());
    }

    @Test
    void malformedIaParamsAreRejectedAsInvalidParameter() {
        for (String params : new String[] {"", "rxe0", "rxe0 one", "rxe0 1 2", "rxe0 999"}) {
            IaSpec spec = new IaSpec("ofa-v2-x", params, "", true, "test");
            assertFalse(provider.check(spec).canServe());
            DatException e = assertThrows(DatException.class, () -> provider.open(spec, 8));
            assertEquals(DatReturnType.INVALID_PARAMETER, e.type(), params);
        }
    }

    @Test
    void iaParamsOfOfedDatConfParse() {
        assertEquals(new OfaIaParams("mlx4_0", 1), OfaIaParams.parse("mlx4_0 1"));
        assertEquals(new OfaIaParams("ib0", 0), OfaIaParams.parse(" ib0   0 "));
        assertTrue(OfaIaParams.parse("192.168.77.1 0").isAddress());
        assertFalse(OfaIaParams.parse("ib0 0").isAddress());
    }
}
