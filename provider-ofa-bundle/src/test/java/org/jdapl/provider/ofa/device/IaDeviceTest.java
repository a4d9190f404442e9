package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.IaQuery;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;
import org.junit.jupiter.api.Test;

/** IA open, query and close on a real device (OBJ_01, OBJ_10 for the IA). */
class IaDeviceTest {
    private final OfaProvider provider = new OfaProvider();

    @Test
    void defaultIasOfferEveryDevicePort() {
        String dev = RxeDevice.require();
        List<IaSpec> ias = provider.defaultIas();
        assertTrue(ias.stream().anyMatch(s -> s.iaName().equals("ofa-v2-" + dev + "-1")
                && s.iaParams().equals(dev + " 1")), ias.toString());
        assertTrue(provider.check(ias.get(0)).canServe(), provider.check(ias.get(0)).reason());
        System.out.println("default IAs: " + ias.stream().map(IaSpec::iaName).toList());
    }

    @Test
    void OBJ_01_openQueryCloseByDeviceAndPort() {
        InterfaceAdapter ia = RxeDevice.open(provider);
        IaQuery q = ia.query();
        String dev = RxeDevice.require();
        assertEquals(dev, q.attributes().adapterName());
        assertEquals(dev, q.attributes().specific().get("device"));
        assertEquals("1", q.attributes().specific().get("port"));
        assertEquals("ACTIVE", q.attributes().specific().get("port_state"));
        assertTrue(q.attributes().maxEps() > 0 && q.attributes().maxEvdQlen() > 0 && q.attributes().maxPzs() > 0);
        assertEquals("ofa", q.provider().providerName());
        assertNotNull(q.asyncEvd());
        System.out.println("IA " + ia.name() + ": " + q.attributes().specific() + " address "
                + q.attributes().address());
        ia.close(CloseFlag.GRACEFUL);
        assertTrue(ia.isFreed());
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, ia::query).type());
        assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
    }

    @Test
    void openByIpAddressAndByNetdevThroughRdmaCm() {
        String dev = RxeDevice.require();
        for (String params : new String[] {RxeDevice.ADDRESS + " 0", RxeDevice.NETDEV + " 0"}) {
            IaSpec spec = new IaSpec("ofa-v2-" + RxeDevice.NETDEV, params, "", true, "test");
            assertTrue(provider.check(spec).canServe(), provider.check(spec).reason());
            try (InterfaceAdapter ia = provider.open(spec, 8)) {
                IaQuery q = ia.query();
                assertEquals(dev, q.attributes().adapterName());
                assertEquals(RxeDevice.ADDRESS,
                        ((InetSocketAddress) q.attributes().address()).getAddress().getHostAddress());
                System.out.println("IA by \"" + params + "\": device " + q.attributes().adapterName() + " port "
                        + q.attributes().specific().get("port"));
            }
        }
        assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
    }

    @Test
    void OBJ_01_gracefulCloseWithLiveObjectsFailsAbruptFreesThem() {
        InterfaceAdapter ia = RxeDevice.open(provider);
        ProtectionZone pz = ia.createPz();
        DatException e = assertThrows(DatException.class, () -> ia.close(CloseFlag.GRACEFUL));
        assertEquals(DatReturnType.INVALID_STATE, e.type());
        assertEquals(DatReturnSubtype.INVALID_STATE_IA_IN_USE, e.subtype());
        assertFalse(ia.isFreed());
        ia.close(CloseFlag.ABRUPT);
        assertTrue(pz.isFreed());
        assertEquals(DatReturnSubtype.INVALID_HANDLE_PZ, assertThrows(DatException.class, pz::query).subtype());
        assertTrue(provider.openObjects().isEmpty(), provider.openObjects().toString());
    }

    @Test
    void aMissingPortFailsResourceDevice() {
        String dev = RxeDevice.require();
        DatException e = assertThrows(DatException.class,
                () -> provider.open(new IaSpec("x", dev + " 9", "", true, "test"), 8));
        assertEquals(DatReturnType.INSUFFICIENT_RESOURCES, e.type());
        assertEquals(DatReturnSubtype.RESOURCE_DEVICE, e.subtype());
        assertFalse(provider.check(new IaSpec("x", dev + " 9", "", true, "test")).canServe());
    }
}
