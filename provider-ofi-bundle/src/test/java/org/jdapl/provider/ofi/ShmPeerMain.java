package org.jdapl.provider.ofi;

import java.util.EnumSet;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.spi.IaSpec;

/**
 * The peer JVM of {@link OfiRdmPeerDeathTest}: a shm IA with a PSP on the port of its argument; it
 * accepts one connection, prints {@code accepted} and waits to be killed (60 s at most).
 */
public final class ShmPeerMain {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        try (InterfaceAdapter ia = new OfiProvider().open(new IaSpec("peer", "shm", "", true, "t"), 8)) {
            EventDispatcher crs = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            EventDispatcher conn = ia.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher dto = ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            ProtectionZone pz = ia.createPz();
            ia.createPsp(port, crs, PspFlag.CONSUMER);
            System.out.println("listening");
            Endpoint ep = ia.createEp(pz, dto, dto, conn, null);
            DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) crs.waitEvent(30_000_000, 1);
            cr.request().accept(ep, new byte[0]);
            DatEvent e = conn.waitEvent(10_000_000, 1);
            System.out.println("accepted " + e);
            Thread.sleep(60_000);
        }
    }
}
