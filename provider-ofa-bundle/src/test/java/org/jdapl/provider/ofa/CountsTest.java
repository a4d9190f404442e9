package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;
import org.junit.jupiter.api.Test;

/** The counters' arithmetic, without a device: a counter and its bytes, sums, resets, the IA's objects. */
class CountsTest {
    @Test
    void EXT_09_anOperationCountsOnceWithItsBytesInTheCounterAfterIt() {
        Counts c = Counts.of(EpCounter.class);
        c.incWithData(EpCounter.POST_SEND, 64);
        c.incWithData(EpCounter.POST_SEND, 36);
        c.inc(EpCounter.POST_FETCH_ADD);
        Counters<EpCounter> q = Counts.query(EpCounter.class, false, c);
        assertEquals(2, q.get(EpCounter.POST_SEND));
        assertEquals(100, q.get(EpCounter.POST_SEND_DATA));
        assertEquals(1, q.get(EpCounter.POST_FETCH_ADD));
        assertEquals(0, q.get(EpCounter.POST_CMP_SWAP));
        assertEquals(0, q.get(EpCounter.POST_SEND_UD));
        c.incWithData(EpCounter.RECV_RDMA_IMM, 8);
        assertEquals(8, Counts.query(EpCounter.class, false, c).get(EpCounter.RECV_RDMA_IMM_DATA));
    }

    @Test
    void EXT_09_aQueryWithResetReturnsTheCountsThenZeroesThem() {
        Counts c = Counts.of(EvdCounter.class);
        Counts d = Counts.of(EvdCounter.class);
        c.inc(EvdCounter.DEQUEUE);
        d.inc(EvdCounter.DEQUEUE);
        d.inc(EvdCounter.DEQUEUE_FOUND);
        Counters<EvdCounter> q = Counts.query(EvdCounter.class, true, c, d);
        assertEquals(2, q.get(EvdCounter.DEQUEUE));
        assertEquals(1, q.get(EvdCounter.DEQUEUE_FOUND));
        assertEquals(Counters.zero(EvdCounter.class), Counts.query(EvdCounter.class, false, c, d));
    }

    @Test
    void EXT_09_theIaCountsItsObjectsAsTheyComeAndGo() {
        IaObjects objects = new IaObjects(new ObjectCounts());
        IaObjects.Owned pz = () -> { };
        objects.add(HandleType.PZ, pz);
        objects.add(HandleType.PZ, pz);
        objects.add(HandleType.CR, () -> { });
        objects.remove(HandleType.PZ, pz);
        objects.remove(HandleType.PZ, pz);
        objects.count(IaCounter.SP_CR_ACCEPTED);
        Counters<IaCounter> q = objects.queryCounters(true);
        assertEquals(1, q.get(IaCounter.PZ_CREATE), "an object added twice is created once");
        assertEquals(1, q.get(IaCounter.PZ_FREE), "an object removed twice is freed once");
        assertEquals(1, q.get(IaCounter.SP_CR));
        assertEquals(1, q.get(IaCounter.SP_CR_ACCEPTED));
        assertEquals(0, objects.queryCounters(false).get(IaCounter.PZ_CREATE));
    }
}
