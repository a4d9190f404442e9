package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.EnumSet;
import java.util.Optional;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A connection request outlives its PSP (FREE_07 frees the PSP, then rejects): the PSP's passive
 * endpoint stays open until its last request is answered, so the reject reaches the peer with its
 * private data, and a request left to the IA's abrupt close is refused through it (an IA close
 * frees its objects in no set order, so a PSP could go before its requests; FREE_02 between two JVMs
 * failed so, "fi_reject (not offered by the provider)", read from the closed endpoint's ops table).
 */
class OfiFreedPspRequestTest {
    private static final long WAIT_NANOS = 5_000_000_000L;

    @Test
    void free07Free02RequestOfAFreedPspIsRejectedThroughItsPassiveEndpoint() throws Exception {
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
            cr.request().reject(new byte[] {7});
            DatEvent.Connection rejected = assertInstanceOf(DatEvent.Connection.class, next(aConn));
            assertEquals(EventNumber.CONNECTION_PEER_REJECTED, rejected.number());
            assertArrayEquals(new byte[] {7}, rejected.privateData());
            // A second request of a freed PSP, left to the IA's abrupt close.
            PublicServicePoint psp2 = b.createPspAny(bCr, PspFlag.CONSUMER);
            Endpoint ea2 = a.createEp(pa, aDto, aDto, aConn, null);
            ea2.connect(b.query().attributes().address(), psp2.query().connQual(), 5_000_000, new byte[0],
                    Qos.BEST_EFFORT, ConnectFlag.DEFAULT);
            assertInstanceOf(DatEvent.ConnectionRequest.class, next(bCr));
            psp2.free();
            b.close(CloseFlag.ABRUPT);
            DatEvent.Connection refused = assertInstanceOf(DatEvent.Connection.class, next(aConn));
            assertEquals(EventNumber.CONNECTION_NON_PEER_REJECTED, refused.number());
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
