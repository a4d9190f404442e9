package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.Counters;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.IaCounter;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * OFED's counters (DAT_COUNTERS) on the device: the extended operations, the receives that carry
 * immediate data, the EVD's waits and the IA's objects, each counted once; what the conformance
 * kit's EXT_09 case does not reach.
 */
class CountersDeviceTest {
    private static final long WAIT = 20_000_000;
    private DevicePair pair;
    private InterfaceAdapter a;
    private InterfaceAdapter b;
    private ProtectionZone pa;
    private ProtectionZone pb;
    private Arena arena;

    @BeforeEach
    void open() {
        pair = DevicePair.open();
        a = pair.a;
        b = pair.b;
        pa = pair.pa;
        pb = pair.pb;
        arena = pair.arena;
    }

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    private static RmrTriplet remote(LocalMemoryRegion lmr, long offset, long length) {
        LocalMemoryRegion.LmrParam q = lmr.query();
        return new RmrTriplet(q.rmrContext(), q.registeredAddress() + offset, length);
    }

    @Test
    void EXT_09_extendedOperationsImmediateReceivesWaitsAndObjectsAreCountedOnce() {
        assertTrue(a.query().provider().offers(ProviderAttributes.DAT_COUNTERS),
                a.query().provider().specific().toString());
        Set<EvdFlag> all = EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR);
        EventDispatcher da = a.createEvd(256, null, all);
        EventDispatcher db = b.createEvd(256, null, all);
        a.queryCounters(true);
        a.queryEpCounters(true);
        b.queryEvdCounters(true);
        DevicePair.Connected c = pair.connect(da, db, new byte[0], new byte[0], WAIT);
        Endpoint ea = c.ea();
        Endpoint eb = c.eb();

        MemorySegment src = arena.allocate(4096, 8);
        MemorySegment sink = arena.allocate(8192, 8);
        LocalMemoryRegion la = a.createLmr(pa, src, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, sink, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE,
                MemPriv.REMOTE_READ, MemPriv.REMOTE_WRITE, MemPriv.REMOTE_ATOMIC), VaType.VA);
        eb.postRecv(List.of(new LmrTriplet(lb, 4096, 256)), 1, Dat.COMPLETION_DEFAULT);
        eb.postRecv(List.of(new LmrTriplet(lb, 4352, 256)), 2, Dat.COMPLETION_DEFAULT);
        ea.postRdmaWriteWithImmediate(List.of(new LmrTriplet(la, 0, 3000)), 10, remote(lb, 0, 3000), 7,
                Dat.COMPLETION_DEFAULT);
        ea.postSend(List.of(new LmrTriplet(la, 0, 100)), 11, Dat.COMPLETION_DEFAULT);
        ea.postFetchAndAdd(1, new LmrTriplet(la, 3008, 8), 12, remote(lb, 8000, 8), Dat.COMPLETION_DEFAULT);
        ea.postCompareAndSwap(0, 1, new LmrTriplet(la, 3016, 8), 13, remote(lb, 8008, 8), Dat.COMPLETION_DEFAULT);
        ea.postRdmaRead(List.of(new LmrTriplet(la, 3100, 50)), 14, remote(lb, 0, 50), Dat.COMPLETION_DEFAULT);
        for (int i = 0; i < 5; i++) {
            da.waitEvent(WAIT);
        }
        db.waitEvent(WAIT);
        db.waitEvent(WAIT);

        Counters<EpCounter> sender = ea.queryCounters(false);
        assertEquals(1, sender.get(EpCounter.CONNECT), sender.toString());
        assertEquals(1, sender.get(EpCounter.POST_WRITE_IMM), sender.toString());
        assertEquals(3000, sender.get(EpCounter.POST_WRITE_IMM_DATA), sender.toString());
        assertEquals(1, sender.get(EpCounter.POST_SEND), sender.toString());
        assertEquals(100, sender.get(EpCounter.POST_SEND_DATA), sender.toString());
        assertEquals(1, sender.get(EpCounter.POST_FETCH_ADD), sender.toString());
        assertEquals(1, sender.get(EpCounter.POST_CMP_SWAP), sender.toString());
        assertEquals(1, sender.get(EpCounter.POST_READ), sender.toString());
        assertEquals(50, sender.get(EpCounter.POST_READ_DATA), sender.toString());
        assertEquals(0, sender.get(EpCounter.POST_WRITE), sender.toString());
        Counters<EpCounter> receiver = eb.queryCounters(false);
        assertEquals(2, receiver.get(EpCounter.POST_RECV), receiver.toString());
        assertEquals(512, receiver.get(EpCounter.POST_RECV_DATA), receiver.toString());
        assertEquals(1, receiver.get(EpCounter.RECV_RDMA_IMM), receiver.toString());
        assertEquals(3000, receiver.get(EpCounter.RECV_RDMA_IMM_DATA), receiver.toString());
        assertEquals(1, receiver.get(EpCounter.RECV), receiver.toString());
        assertEquals(100, receiver.get(EpCounter.RECV_DATA), receiver.toString());
        assertEquals(0, receiver.get(EpCounter.RECV_IMM), receiver.toString());

        // The waits on db: the request, the connection, two receives, and one that times out (it blocks).
        assertThrows(DatException.class, () -> db.waitEvent(10_000));
        Counters<EvdCounter> evd = db.queryCounters(false);
        assertEquals(5, evd.get(EvdCounter.WAIT), evd.toString());
        assertTrue(evd.get(EvdCounter.WAIT_BLOCKED) >= 1 && evd.get(EvdCounter.WAIT_BLOCKED) <= 5, evd.toString());
        assertEquals(2, evd.get(EvdCounter.DTO_CALLBACK), evd.toString());
        assertEquals(1, evd.get(EvdCounter.CONN_CALLBACK), evd.toString());
        // The IA's EVD totals: db's and those of the asynchronous EVD, which had nothing.
        assertEquals(evd, b.queryEvdCounters(false));
        DatException timeout = assertThrows(DatException.class, () -> db.waitEvent(1000));
        assertEquals(DatReturnType.TIMEOUT_EXPIRED, timeout.type());

        Counters<IaCounter> ia = a.queryCounters(false);
        assertEquals(1, ia.get(IaCounter.EP_CREATE), ia.toString());
        assertEquals(1, ia.get(IaCounter.LMR_CREATE), ia.toString());
        assertEquals(0, ia.get(IaCounter.EVD_CREATE), ia.toString());
        Counters<IaCounter> passive = b.queryCounters(true);
        assertEquals(1, passive.get(IaCounter.SP_CR), passive.toString());
        assertEquals(1, passive.get(IaCounter.SP_CR_ACCEPTED), passive.toString());
        assertEquals(1, passive.get(IaCounter.PSP_CREATE), passive.toString());
        assertEquals(1, passive.get(IaCounter.PSP_FREE), passive.toString());
        assertEquals(0, b.queryCounters(false).get(IaCounter.SP_CR), "after a reset");

        // A freed EP's counters stay in its IA's totals until they are reset.
        ea.free();
        assertEquals(1, a.queryCounters(false).get(IaCounter.EP_FREE));
        Counters<EpCounter> totals = a.queryEpCounters(true);
        assertEquals(1, totals.get(EpCounter.POST_FETCH_ADD), totals.toString());
        assertEquals(0, a.queryEpCounters(false).get(EpCounter.POST_FETCH_ADD), "after a reset");
        DatException freed = assertThrows(DatException.class, () -> ea.queryCounters(false));
        assertEquals(DatReturnType.INVALID_HANDLE, freed.type());
    }
}
