package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.EnumSet;
import java.util.Optional;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A connection request outlives its PSP: after the PSP is freed (its passive endpoint closed), the
 * request's reject and the abrupt close of the IA that still holds it do not touch the closed
 * passive endpoint (an IA close frees its objects in no set order, so a PSP could go before its
 * requests; FREE_02 between two JVMs failed so, "fi_reject (not offered by the provider)", from the
 * freed endpoint's ops table).
 */
class OfiFreedPspRequestTest {
    private static final long WAIT_NANOS = 5_000_000_000L;

    @Test
    void free02RejectAfterThePspWasFreedFailsInvalidStateAndCloseAbruptFreesTheRequest() throws Exception {
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        OfiProvider p = new OfiProvider();
        try (InterfaceAdapter a = p.open(new IaSpec("a", "tcp lo", "", true, "t"), 8)) {
            InterfaceAdapter b = p.open(new IaSpec("b", "tcp lo", "", true, "t"), 8);
            EventDispatcher aDto = a.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher aConn = a.createEvd(4, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher bCr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            ProtectionZone pa = a.createPz();
            PublicServicePoint psp = b.createPspAny(bCr, PspFlag.CONSUMER);
            Endpoint ea = a.createEp(pa, aDto, aDto, aConn, null);
            ea.connect(b.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0],
                    Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, next(bCr));
            psp.free();
            DatException e = assertThrows(DatException.class, () -> cr.request().reject(new byte[0]));
            assertEquals(DatReturnType.INVALID_STATE, e.type(), e.getMessage());
            b.close(CloseFlag.ABRUPT);
        }
    }

    private static DatEvent next(EventDispatcher evd) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (System.nanoTime() < end) {
            Optional<DatEvent> e = evd.dequeue();
            if (e.isPresent()) {
                return e.get();
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no event within 5 s");
    }
}
