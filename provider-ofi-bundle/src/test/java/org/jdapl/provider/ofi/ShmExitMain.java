package org.jdapl.provider.ofi;

import java.util.EnumSet;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.spi.IaSpec;

/**
 * The JVM of {@link OfiShmRegionsTest}'s exit case: opens a shm IA with a PSP (a shm region in
 * {@code /dev/shm}), prints {@code open}, and exits without closing the IA.
 */
public final class ShmExitMain {
    public static void main(String[] args) {
        int port = 20000 + (int) (ProcessHandle.current().pid() % 20000);
        InterfaceAdapter ia = new OfiProvider().open(new IaSpec("x", "shm", "", true, "t"), 8);
        EventDispatcher crs = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR));
        ia.createPsp(port, crs, PspFlag.CONSUMER);
        System.out.println("open " + RdmLocal.key(RdmListener.pspName(port)));
        System.exit(0);
    }
}
