package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
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
 * OFED's DAT extensions on the device: remote atomics (IBV_WR_ATOMIC_FETCH_AND_ADD,
 * IBV_WR_ATOMIC_CMP_AND_SWP) and RDMA Write with immediate data (IBV_WR_RDMA_WRITE_WITH_IMM), between
 * EPs of two IAs; every extended DTO completes once as a {@link DatEvent.ExtendedDtoCompletion}.
 */
class ExtensionsDeviceTest {
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

    /** A connected pair: EP {@code ea} of IA a, {@code eb} of IA b, each with one EVD for every stream. */
    private record Pair(Endpoint ea, Endpoint eb, EventDispatcher da, EventDispatcher db) {
    }

    private Pair connect() {
        DevicePair.Connected c = pair.connect(2048, EnumSet.of(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.CR),
                new byte[0], new byte[0], WAIT);
        return new Pair(c.ea(), c.eb(), c.da(), c.db());
    }

    private static DatEvent.ExtendedDtoCompletion ext(EventDispatcher evd) {
        return assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, evd.waitEvent(WAIT));
    }

    private static RmrTriplet remote(LocalMemoryRegion lmr, long offset, long length) {
        LocalMemoryRegion.LmrParam q = lmr.query();
        return new RmrTriplet(q.rmrContext(), q.registeredAddress() + offset, length);
    }

    @Test
    void EXT_01_fetchAndAddAndCompareAndSwapReturnTheOriginalValueAndUpdateTheTarget() {
        ProviderAttributes attrs = a.query().provider();
        assertTrue(attrs.offers(ProviderAttributes.DAT_IB_FETCH_AND_ADD), attrs.specific().toString());
        assertTrue(attrs.offers(ProviderAttributes.DAT_IB_CMP_AND_SWAP), attrs.specific().toString());
        assertTrue(attrs.offers(ProviderAttributes.DAT_IB_IMMED_DATA), attrs.specific().toString());
        Pair p = connect();
        MemorySegment local = arena.allocate(64, 8);
        MemorySegment target = arena.allocate(64, 8);
        target.set(ValueLayout.JAVA_LONG, 8, 1000);
        LocalMemoryRegion la = a.createLmr(pa, local, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, target, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE,
                MemPriv.REMOTE_ATOMIC), VaType.VA);
        p.ea.postFetchAndAdd(5, new LmrTriplet(la, 0, 8), 1, remote(lb, 8, 8), Dat.COMPLETION_DEFAULT);
        DatEvent.ExtendedDtoCompletion faa = ext(p.da);
        assertEquals(new DatEvent.ExtendedDtoCompletion(p.da, p.ea, 1, DtoStatus.SUCCESS, 8,
                ExtensionType.FETCH_AND_ADD, 0, null), faa);
        assertEquals(1000, local.get(ValueLayout.JAVA_LONG, 0));
        assertEquals(1005, target.get(ValueLayout.JAVA_LONG, 8));

        // A compare that fails leaves the target; the value is returned either way.
        p.ea.postCompareAndSwap(7, 9, new LmrTriplet(la, 8, 8), 2, remote(lb, 8, 8), Dat.COMPLETION_DEFAULT);
        EventSlot slot = new EventSlot();
        p.da.waitEvent(WAIT, 1, slot);
        assertTrue(slot.isExtendedDtoCompletion(), slot.toString());
        assertEquals(ExtensionType.CMP_AND_SWAP, slot.extensionType());
        assertEquals(DtoStatus.SUCCESS, slot.status());
        assertEquals(2, slot.cookie());
        assertEquals(1005, local.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(1005, target.get(ValueLayout.JAVA_LONG, 8));
        p.ea.postCompareAndSwap(1005, -3, new LmrTriplet(la, 16, 8), 3, remote(lb, 8, 8), Dat.COMPLETION_DEFAULT);
        DatEvent.ExtendedDtoCompletion cas = ext(p.da);
        assertEquals(ExtensionType.CMP_AND_SWAP, cas.type());
        assertEquals(DtoStatus.SUCCESS, cas.status());
        assertEquals(8, cas.transferredLength());
        assertEquals(1005, local.get(ValueLayout.JAVA_LONG, 16));
        assertEquals(-3, target.get(ValueLayout.JAVA_LONG, 8));

        // Bad operands fail at post and post nothing.
        DatException small = assertThrows(DatException.class, () -> p.ea.postFetchAndAdd(1,
                new LmrTriplet(la, 0, 4), 4, remote(lb, 8, 8), Dat.COMPLETION_DEFAULT));
        assertEquals(DatReturnType.INVALID_PARAMETER, small.type());
        DatException unaligned = assertThrows(DatException.class, () -> p.ea.postCompareAndSwap(0, 1,
                new LmrTriplet(la, 0, 8), 5, remote(lb, 4, 8), Dat.COMPLETION_DEFAULT));
        assertEquals(DatReturnType.INVALID_PARAMETER, unaligned.type());
        assertTrue(p.da.dequeue().isEmpty());
        assertEquals(-3, target.get(ValueLayout.JAVA_LONG, 8));
    }

    @Test
    void EXT_01_anAtomicOnMemoryWithoutRemoteAtomicCompletesRemoteAccess() {
        Pair p = connect();
        MemorySegment local = arena.allocate(64, 8);
        MemorySegment target = arena.allocate(64, 8);
        target.set(ValueLayout.JAVA_LONG, 0, 42);
        LocalMemoryRegion la = a.createLmr(pa, local, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, target, EnumSet.of(MemPriv.LOCAL_WRITE, MemPriv.REMOTE_WRITE,
                MemPriv.REMOTE_READ), VaType.VA);
        p.ea.postFetchAndAdd(1, new LmrTriplet(la, 0, 8), 7, remote(lb, 0, 8), Dat.COMPLETION_DEFAULT);
        DatEvent.ExtendedDtoCompletion refused = ext(p.da);
        assertEquals(7, refused.cookie());
        assertEquals(ExtensionType.FETCH_AND_ADD, refused.type());
        assertEquals(DtoStatus.REMOTE_ACCESS, refused.status());
        assertEquals(42, target.get(ValueLayout.JAVA_LONG, 0));
    }

    /** Fetch-and-adds of 1 from {@code eps} EPs at once, {@code perEp} each, on one target. */
    @Test
    void EXT_02_aThousandConcurrentFetchAndAddsFromSeveralEpsSumExactly() throws Exception {
        int eps = 4;
        int perEp = 250;
        MemorySegment target = arena.allocate(8, 8);
        target.set(ValueLayout.JAVA_LONG, 0, 0);
        LocalMemoryRegion lb = b.createLmr(pb, target, EnumSet.of(MemPriv.LOCAL_WRITE, MemPriv.REMOTE_ATOMIC),
                VaType.VA);
        MemorySegment local = arena.allocate(8L * eps * perEp, 8);
        LocalMemoryRegion la = a.createLmr(pa, local, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < eps; i++) {
            pairs.add(connect());
        }
        RmrTriplet counter = remote(lb, 0, 8);
        ExecutorService pool = Executors.newFixedThreadPool(eps);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < eps; i++) {
                Pair p = pairs.get(i);
                int first = i * perEp;
                done.add(pool.submit(() -> {
                    // At most 32 outstanding per EP: the request queue's depth is the EP's default.
                    int posted = 0;
                    int completed = 0;
                    while (completed < perEp) {
                        while (posted < perEp && posted - completed < 32) {
                            int k = first + posted;
                            p.ea.postFetchAndAdd(1, new LmrTriplet(la, 8L * k, 8), k, counter, Dat.COMPLETION_DEFAULT);
                            posted++;
                        }
                        DatEvent.ExtendedDtoCompletion c = ext(p.da);
                        assertEquals(DtoStatus.SUCCESS, c.status(), c.toString());
                        assertEquals(ExtensionType.FETCH_AND_ADD, c.type());
                        completed++;
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
        int total = eps * perEp;
        assertEquals(total, target.get(ValueLayout.JAVA_LONG, 0));
        BitSet seen = new BitSet(total);
        for (int k = 0; k < total; k++) {
            long old = local.get(ValueLayout.JAVA_LONG, 8L * k);
            assertTrue(old >= 0 && old < total && !seen.get((int) old), "fetch-and-add " + k + " saw " + old);
            seen.set((int) old);
        }
        assertEquals(total, seen.cardinality());
    }

    /** Compare-and-swap increments from several EPs at once: each success saw a distinct value. */
    @Test
    void EXT_03_compareAndSwapUnderContentionLosesNoUpdate() throws Exception {
        int eps = 3;
        int perEp = 40;
        MemorySegment target = arena.allocate(8, 8);
        target.set(ValueLayout.JAVA_LONG, 0, 0);
        LocalMemoryRegion lb = b.createLmr(pb, target, EnumSet.of(MemPriv.LOCAL_WRITE, MemPriv.REMOTE_ATOMIC),
                VaType.VA);
        MemorySegment local = arena.allocate(8L * eps, 8);
        LocalMemoryRegion la = a.createLmr(pa, local, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < eps; i++) {
            pairs.add(connect());
        }
        RmrTriplet counter = remote(lb, 0, 8);
        ExecutorService pool = Executors.newFixedThreadPool(eps);
        List<Future<long[]>> results = new ArrayList<>();
        try {
            for (int i = 0; i < eps; i++) {
                Pair p = pairs.get(i);
                int slot = i;
                results.add(pool.submit(() -> {
                    long[] won = new long[perEp];
                    int wins = 0;
                    long expected = 0;
                    while (wins < perEp) {
                        p.ea.postCompareAndSwap(expected, expected + 1, new LmrTriplet(la, 8L * slot, 8), wins,
                                counter, Dat.COMPLETION_DEFAULT);
                        DatEvent.ExtendedDtoCompletion c = ext(p.da);
                        assertEquals(DtoStatus.SUCCESS, c.status(), c.toString());
                        assertEquals(ExtensionType.CMP_AND_SWAP, c.type());
                        long old = local.get(ValueLayout.JAVA_LONG, 8L * slot);
                        if (old == expected) {
                            won[wins++] = old;
                            expected = old + 1;
                        } else {
                            assertTrue(old > expected, "the counter went back to " + old + " from " + expected);
                            expected = old;
                        }
                    }
                    return won;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<long[]> f : results) {
                for (long v : f.get(120, TimeUnit.SECONDS)) {
                    assertTrue(all.add(v), "two compare-and-swaps succeeded on " + v);
                }
            }
            assertEquals(eps * perEp, all.size());
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
        assertEquals(eps * perEp, target.get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void EXT_05_rdmaWriteWithImmediateConsumesExactlyOneReceiveAndCarriesTheData() {
        Pair p = connect();
        MemorySegment src = arena.allocate(4096, 8);
        MemorySegment sink = arena.allocate(8192, 8);
        for (int i = 0; i < 4096; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
        }
        LocalMemoryRegion la = a.createLmr(pa, src, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, sink, Dat.MEM_PRIV_ALL, VaType.VA);
        p.eb.postRecv(List.of(new LmrTriplet(lb, 4096, 256)), 101, Dat.COMPLETION_DEFAULT);
        p.eb.postRecv(List.of(new LmrTriplet(lb, 4352, 256)), 102, Dat.COMPLETION_DEFAULT);
        p.ea.postRdmaWriteWithImmediate(List.of(new LmrTriplet(la, 0, 3000)), 11, remote(lb, 0, 3000), 0x12345678,
                Dat.COMPLETION_DEFAULT);
        DatEvent.ExtendedDtoCompletion written = ext(p.da);
        assertEquals(new DatEvent.ExtendedDtoCompletion(p.da, p.ea, 11, DtoStatus.SUCCESS, 3000,
                ExtensionType.RDMA_WRITE_IMMED, 0, null), written);
        DatEvent.ExtendedDtoCompletion arrived = ext(p.db);
        assertEquals(new DatEvent.ExtendedDtoCompletion(p.db, p.eb, 101, DtoStatus.SUCCESS, 3000,
                ExtensionType.RDMA_WRITE_IMMED_DATA, 0x12345678, null), arrived);
        assertEquals(src.asSlice(0, 3000).mismatch(sink.asSlice(0, 3000)), -1);
        assertTrue(p.db.dequeue().isEmpty(), "the write consumed more than one receive");
        // The second receive is still there: a send takes it.
        p.ea.postSend(List.of(new LmrTriplet(la, 0, 100)), 12, Dat.COMPLETION_DEFAULT);
        assertEquals(DtoOperation.SEND, assertInstanceOf(DatEvent.DtoCompletion.class, p.da.waitEvent(WAIT)).operation());
        DatEvent.DtoCompletion got = assertInstanceOf(DatEvent.DtoCompletion.class, p.db.waitEvent(WAIT));
        assertEquals(102, got.cookie());
        assertEquals(100, got.transferredLength());
        // A zero-length write with immediate data still hands the data over in a receive.
        p.eb.postRecv(List.of(new LmrTriplet(lb, 4096, 256)), 103, Dat.COMPLETION_DEFAULT);
        p.ea.postRdmaWriteWithImmediate(List.of(), 13, remote(lb, 0, 0), -1, Dat.COMPLETION_DEFAULT);
        assertEquals(ExtensionType.RDMA_WRITE_IMMED, ext(p.da).type());
        DatEvent.ExtendedDtoCompletion empty = ext(p.db);
        assertEquals(103, empty.cookie());
        assertEquals(-1, empty.immediateData());
        assertEquals(0, empty.transferredLength());
    }

    @Test
    void EXT_06_immediateDataArrivesInOrderWithSends() {
        Pair p = connect();
        int n = 40;
        MemorySegment src = arena.allocate(64L * n, 8);
        MemorySegment sink = arena.allocate(64L * n * 2, 8);
        for (int i = 0; i < n; i++) {
            src.set(ValueLayout.JAVA_LONG, 64L * i, i);
        }
        LocalMemoryRegion la = a.createLmr(pa, src, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, sink, Dat.MEM_PRIV_ALL, VaType.VA);
        for (int i = 0; i < n; i++) {
            p.eb.postRecv(List.of(new LmrTriplet(lb, 64L * n + 64L * i, 64)), 1000 + i, Dat.COMPLETION_DEFAULT);
        }
        for (int i = 0; i < n; i++) {
            LmrTriplet t = new LmrTriplet(la, 64L * i, 64);
            if (i % 2 == 0) {
                p.ea.postSend(List.of(t), i, Dat.COMPLETION_DEFAULT);
            } else {
                p.ea.postRdmaWriteWithImmediate(List.of(t), i, remote(lb, 64L * i, 64), 0x5000 + i,
                        Dat.COMPLETION_DEFAULT);
            }
        }
        for (int i = 0; i < n; i++) {
            DatEvent e = p.db.waitEvent(WAIT);
            if (i % 2 == 0) {
                DatEvent.DtoCompletion d = assertInstanceOf(DatEvent.DtoCompletion.class, e, "event " + i);
                assertEquals(1000 + i, d.cookie());
                assertEquals(i, sink.get(ValueLayout.JAVA_LONG, 64L * n + 64L * i));
            } else {
                DatEvent.ExtendedDtoCompletion x = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, e,
                        "event " + i);
                assertEquals(1000 + i, x.cookie());
                assertEquals(0x5000 + i, x.immediateData());
                assertEquals(ExtensionType.RDMA_WRITE_IMMED_DATA, x.type());
                assertEquals(i, sink.get(ValueLayout.JAVA_LONG, 64L * i), "the written data is visible");
            }
        }
        for (int i = 0; i < n; i++) {
            DatEvent e = p.da.waitEvent(WAIT);
            long cookie = e instanceof DatEvent.ExtendedDtoCompletion x ? x.cookie()
                    : assertInstanceOf(DatEvent.DtoCompletion.class, e).cookie();
            assertEquals(i, cookie);
            assertEquals(i % 2 == 1, e instanceof DatEvent.ExtendedDtoCompletion, e.toString());
        }
    }

    /**
     * Every extended DTO outstanding at an abrupt disconnect completes once, FLUSHED: the first is an
     * RDMA Write with immediate data that finds no receive at the sink, which the sink answers RNR
     * for ever (rnr_retry 7), so that it and every request behind it are still outstanding.
     */
    @Test
    void EXT_07_extendedDtosOutstandingAtDisconnectCompleteOnceEachFlushed() {
        Pair p = connect();
        MemorySegment local = arena.allocate(8L * 64, 8);
        MemorySegment target = arena.allocate(4096, 8);
        LocalMemoryRegion la = a.createLmr(pa, local, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE), VaType.VA);
        LocalMemoryRegion lb = b.createLmr(pb, target, Dat.MEM_PRIV_ALL, VaType.VA);
        int n = 48;
        for (int i = 0; i < n; i++) {
            switch (i % 3) {
                case 1 -> p.ea.postFetchAndAdd(1, new LmrTriplet(la, 8L * i, 8), i, remote(lb, 0, 8),
                        Dat.COMPLETION_DEFAULT);
                case 2 -> p.ea.postCompareAndSwap(0, 1, new LmrTriplet(la, 8L * i, 8), i, remote(lb, 8, 8),
                        Dat.COMPLETION_DEFAULT);
                default -> p.ea.postRdmaWriteWithImmediate(List.of(new LmrTriplet(la, 8L * i, 8)), i,
                        remote(lb, 1024 + 8L * i, 8), i, Dat.COMPLETION_DEFAULT);
            }
        }
        sleep(500);
        assertTrue(p.da.dequeue().isEmpty(), "a request completed behind a write the sink cannot take");
        p.ea.disconnect(CloseFlag.ABRUPT);
        BitSet seen = new BitSet(n);
        int flushed = 0;
        boolean disconnected = false;
        while (seen.cardinality() < n || !disconnected) {
            DatEvent e = p.da.waitEvent(WAIT);
            if (e instanceof DatEvent.Connection c) {
                assertEquals(EventNumber.CONNECTION_DISCONNECTED, c.number());
                disconnected = true;
                continue;
            }
            DatEvent.ExtendedDtoCompletion x = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, e);
            int i = (int) x.cookie();
            assertFalse(seen.get(i), "DTO " + i + " completed twice");
            seen.set(i);
            assertEquals(i % 3 == 1 ? ExtensionType.FETCH_AND_ADD : i % 3 == 2 ? ExtensionType.CMP_AND_SWAP
                    : ExtensionType.RDMA_WRITE_IMMED, x.type());
            assertEquals(DtoStatus.FLUSHED, x.status(), x.toString());
            assertEquals(0, x.transferredLength());
            flushed++;
        }
        assertTrue(disconnected);
        assertTrue(p.da.dequeue().isEmpty());
        assertEquals(n, flushed);
        assertEquals(0, target.get(ValueLayout.JAVA_LONG, 0), "an atomic behind the stalled write was applied");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
