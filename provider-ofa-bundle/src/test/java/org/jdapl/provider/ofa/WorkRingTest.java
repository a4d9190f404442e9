package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jdapl.dat.DtoOperation;
import org.junit.jupiter.api.Test;

/** The ring of a queue's work requests: capacity, wr_id round trip, retirement, generations. */
class WorkRingTest {
    @Test
    void holdsExactlyItsCapacityAndFindsEveryEntryAcrossManyWraps() {
        for (int capacity : new int[] {1, 2, 3, 5, 16, 17, 100}) {
            WorkRing ring = new WorkRing(WorkRing.SEND, capacity);
            ring.reset(7);
            long cookie = 0;
            for (int round = 0; round < 50; round++) {
                long[] ids = new long[capacity];
                for (int i = 0; i < capacity; i++) {
                    assertFalse(ring.full(), "capacity " + capacity + " full after " + i);
                    ids[i] = ring.nextWrId();
                    ring.add(cookie + i, DtoOperation.RDMA_WRITE, 10 + i, WorkRing.KIND_DTO, (i & 1) == 0, null);
                }
                assertTrue(ring.full(), "capacity " + capacity);
                assertEquals(capacity, ring.outstanding());
                // The last entry's completion retires all of them (RC: unsignalled ones before it).
                for (int i = 0; i < capacity; i++) {
                    long seq = ring.sequenceOf(ids[i]);
                    assertEquals(cookie + i, ring.cookieAt(seq));
                    assertEquals(10 + i, ring.lengthAt(seq));
                    assertEquals((i & 1) == 0, ring.reportAt(seq));
                }
                ring.retireThrough(ring.sequenceOf(ids[capacity - 1]));
                assertEquals(0, ring.outstanding());
                assertEquals(-1, ring.sequenceOf(ids[0]), "a retired entry is not found again");
                cookie += capacity;
            }
        }
    }

    @Test
    void aCompletionOfAnEarlierQueuePairOrAnotherQueueIsNotFound() {
        WorkRing ring = new WorkRing(WorkRing.RECV, 4);
        ring.reset(1);
        long old = ring.nextWrId();
        ring.add(1, DtoOperation.RECEIVE, 8, WorkRing.KIND_DTO, true, null);
        ring.reset(2);
        long current = ring.nextWrId();
        ring.add(2, DtoOperation.RECEIVE, 8, WorkRing.KIND_DTO, true, null);
        assertEquals(-1, ring.sequenceOf(old));
        assertEquals(2, ring.cookieAt(ring.sequenceOf(current)));
        long sendTagged = (current & ~WorkRing.TAG_MASK) | WorkRing.SEND;
        assertEquals(-1, ring.sequenceOf(sendTagged));
    }

    @Test
    void anEntryGivesBackEveryFieldItWasAddedWith() {
        WorkRing ring = new WorkRing(WorkRing.SEND, 8);
        ring.reset(3);
        byte[] kinds = {WorkRing.KIND_DTO, WorkRing.KIND_BIND, WorkRing.KIND_DTO_FREED_LMR};
        long[] lengths = {0, 1, 65536, (1L << 32) + 5, (1L << 46) - 1};
        Object rmr = new Object();
        int n = 0;
        for (DtoOperation op : DtoOperation.values()) {
            for (byte kind : kinds) {
                for (long length : lengths) {
                    for (boolean report : new boolean[] {false, true}) {
                        long id = ring.nextWrId();
                        Object subject = kind == WorkRing.KIND_BIND ? rmr : null;
                        ring.add(-n, op, length, kind, report, subject);
                        long seq = ring.sequenceOf(id);
                        String what = op + " kind " + kind + " length " + length + " report " + report;
                        assertEquals(-n, ring.cookieAt(seq), what);
                        assertEquals(op, ring.opAt(seq), what);
                        assertEquals(kind, ring.kindAt(seq), what);
                        assertEquals(length, ring.lengthAt(seq), what);
                        assertEquals(report, ring.reportAt(seq), what);
                        assertEquals(subject, ring.subjectAt(seq), what);
                        ring.retireThrough(seq);
                        assertEquals(null, ring.subjectAt(seq), "a retired entry lets go of its subject: " + what);
                        n++;
                    }
                }
            }
        }
    }
}
