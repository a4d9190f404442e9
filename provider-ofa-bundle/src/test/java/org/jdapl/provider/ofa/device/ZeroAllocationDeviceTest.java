package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalIov;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.provider.ofa.OfaProvider;
import org.jdapl.testsupport.AllocationMeter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The OFA provider's data path allocates nothing per operation in steady state, on the device: 64 B
 * send/receive, RDMA Write and RDMA Read posts of a pre-built {@link LocalIov} and {@link RmrTriplet},
 * their completions taken into a caller-owned {@link EventSlot} by {@code dequeue(slot)} or by
 * {@code waitEvent(timeout, 1, slot)}. The figure is the heap bytes the data path's threads allocated
 * ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}): the calling thread and both IAs'
 * event threads, over {@value #OPS} operations after a warm-up, the least of up to {@value #ROUNDS}
 * rounds. Each row is printed (the harness's report, tests.txt) as
 * {@code OFA heap B/op: <row>: <bytes per operation> ...}; each operation's data and completion are
 * checked.
 */
@Timeout(900)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ZeroAllocationDeviceTest {
    private static final int WARM_UP = 3_000;
    private static final int OPS = 2_000;
    private static final int ROUNDS = 6;
    private static final int SIZE = 64;
    private static final long WAIT = 10_000_000;

    private final OfaProvider provider = new OfaProvider();
    private InterfaceAdapter a;
    private InterfaceAdapter b;
    private Arena arena;
    private Side sa;
    private Side sb;
    private RmrTriplet remote;

    /** One IA's objects: one DTO EVD for both queues, an EP, 64-byte source and target regions. */
    private static final class Side {
        final ProtectionZone pz;
        final EventDispatcher evd;
        final EventDispatcher conn;
        final Endpoint ep;
        final MemorySegment srcMem;
        final MemorySegment dstMem;
        final LocalIov src;
        final LocalIov dst;
        final LocalMemoryRegion dstLmr;

        Side(InterfaceAdapter ia, Arena arena) {
            pz = ia.createPz();
            evd = ia.createEvd(64, null, EnumSet.of(EvdFlag.DTO));
            conn = ia.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION, EvdFlag.CR));
            ep = ia.createEp(pz, evd, evd, conn, EpAttributes.defaults().withQueueDepths(8, 8));
            srcMem = arena.allocate(SIZE, 64);
            dstMem = arena.allocate(SIZE, 64);
            src = LocalIov.of(ia.createLmr(pz, srcMem, Dat.MEM_PRIV_ALL, VaType.VA));
            dstLmr = ia.createLmr(pz, dstMem, Dat.MEM_PRIV_ALL, VaType.VA);
            dst = LocalIov.of(dstLmr);
        }
    }

    @BeforeAll
    void connect() {
        a = RxeDevice.open(provider);
        b = RxeDevice.open(provider);
        arena = Arena.ofShared();
        sa = new Side(a, arena);
        sb = new Side(b, arena);
        PublicServicePoint psp = b.createPspAny(sb.conn, PspFlag.CONSUMER);
        sa.ep.connect(b.query().attributes().address(), psp.query().connQual(), WAIT, new byte[0]);
        DatEvent.ConnectionRequest req = assertInstanceOf(DatEvent.ConnectionRequest.class, sb.conn.waitEvent(WAIT));
        req.request().accept(sb.ep, new byte[0]);
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, sb.conn.waitEvent(WAIT).number());
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, sa.conn.waitEvent(WAIT).number());
        psp.free();
        remote = new RmrTriplet(sb.dstLmr.rmrContext(), sb.dstLmr.query().registeredAddress(), SIZE);
    }

    @AfterAll
    void close() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Runs {@code op} for the warm-up, then measures it ({@link AllocationMeter}); prints the row; returns its least bytes. */
    private long row(String name, AllocationMeter.Op op) {
        AllocationMeter.Result r = new AllocationMeter(WARM_UP, OPS, ROUNDS)
                .threads(() -> AllocationMeter.threadsNamed(n -> n.startsWith("jdapl-ofa-events-")))
                .measure(op);
        System.out.printf("OFA heap B/op: %s: %.1f (%d bytes over %d operations, least of %d rounds;"
                + " %.1f us per operation; this thread and %d event threads)%n",
                name, r.bytesPerOp(OPS), r.leastBytes(), OPS, r.rounds(), r.lastRoundNanos() / 1000.0 / OPS,
                r.threads());
        return r.leastBytes();
    }

    private static void take(EventDispatcher evd, EventSlot slot, long cookie, DtoOperation op) {
        for (long spins = 0; !evd.dequeue(slot); spins++) {
            if (spins > 2_000_000_000L) {
                throw new AssertionError("no completion of " + op + " " + cookie);
            }
            Thread.onSpinWait();
        }
        check(slot, cookie, op);
    }

    private static void check(EventSlot slot, long cookie, DtoOperation op) {
        if (!slot.isDtoCompletion() || slot.status() != DtoStatus.SUCCESS || slot.cookie() != cookie
                || slot.operation() != op || slot.transferredLength() != SIZE) {
            throw new AssertionError("expected " + op + " " + cookie + " of " + SIZE + " bytes, got " + slot);
        }
    }

    /** OBJ_03, OBJ_07: 64 B send/receive, both ends polled by this thread into one reusable slot. */
    @Test
    @Order(1)
    void OBJ_07_sendRecvDequeueAllocatesNothing() {
        EventSlot slot = new EventSlot();
        long bytes = row("64 B send/recv, dequeue", i -> {
            sa.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
            sb.ep.postRecv(sb.dst, i, Dat.COMPLETION_DEFAULT);
            sa.ep.postSend(sa.src, i, Dat.COMPLETION_DEFAULT);
            take(sb.evd, slot, i, DtoOperation.RECEIVE);
            take(sa.evd, slot, i, DtoOperation.SEND);
            if (sb.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                throw new AssertionError("message " + i + " did not arrive");
            }
        });
        assertEquals(0, bytes, "heap bytes over " + OPS + " send/recv operations on the device");
    }

    /** OBJ_03, OBJ_08: 64 B RDMA Writes, each completion dequeued into a reusable slot; the bytes land. */
    @Test
    @Order(2)
    void OBJ_08_rdmaWriteDequeueAllocatesNothing() {
        EventSlot slot = new EventSlot();
        long bytes = row("64 B RDMA Write, dequeue", i -> {
            sa.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
            sa.ep.postRdmaWrite(sa.src, i, remote, Dat.COMPLETION_DEFAULT);
            take(sa.evd, slot, i, DtoOperation.RDMA_WRITE);
            if (sb.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                throw new AssertionError("write " + i + " did not land");
            }
        });
        assertEquals(0, bytes, "heap bytes over " + OPS + " RDMA Writes on the device");
    }

    /** OBJ_03, OBJ_08: 64 B RDMA Reads, each completion dequeued into a reusable slot; the bytes arrive. */
    @Test
    @Order(3)
    void OBJ_08_rdmaReadDequeueAllocatesNothing() {
        EventSlot slot = new EventSlot();
        long bytes = row("64 B RDMA Read, dequeue", i -> {
            sb.dstMem.set(ValueLayout.JAVA_LONG, 0, i);
            sa.ep.postRdmaRead(sa.src, i, remote, Dat.COMPLETION_DEFAULT);
            take(sa.evd, slot, i, DtoOperation.RDMA_READ);
            if (sa.srcMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                throw new AssertionError("read " + i + " did not arrive");
            }
        });
        assertEquals(0, bytes, "heap bytes over " + OPS + " RDMA Reads on the device");
    }

    /** OBJ_03, OBJ_07: 64 B send/receive, both completions taken by waitEvent(timeout, 1, slot). */
    @Test
    @Order(4)
    void OBJ_03_sendRecvWaitAllocatesNothing() {
        EventSlot slot = new EventSlot();
        long bytes = row("64 B send/recv, wait", i -> {
            sa.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
            sb.ep.postRecv(sb.dst, i, Dat.COMPLETION_DEFAULT);
            sa.ep.postSend(sa.src, i, Dat.COMPLETION_DEFAULT);
            sb.evd.waitEvent(WAIT, 1, slot);
            check(slot, i, DtoOperation.RECEIVE);
            sa.evd.waitEvent(WAIT, 1, slot);
            check(slot, i, DtoOperation.SEND);
        });
        assertEquals(0, bytes, "heap bytes over " + OPS + " send/recv operations waited for on the device");
    }

    /** OBJ_03, OBJ_08: 64 B RDMA Writes, each completion taken by waitEvent(timeout, 1, slot). */
    @Test
    @Order(5)
    void OBJ_03_rdmaWriteWaitAllocatesNothing() {
        EventSlot slot = new EventSlot();
        long bytes = row("64 B RDMA Write, wait", i -> {
            sa.ep.postRdmaWrite(sa.src, i, remote, Dat.COMPLETION_DEFAULT);
            sa.evd.waitEvent(WAIT, 1, slot);
            check(slot, i, DtoOperation.RDMA_WRITE);
        });
        assertEquals(0, bytes, "heap bytes over " + OPS + " RDMA Writes waited for on the device");
    }

    private static volatile long[] sink;

    @Test
    @Order(6)
    void theCounterSeesAnAllocation() {
        long bytes = row("allocation probe (not the provider)", i -> sink = new long[(int) (i & 7) + 1]);
        assertTrue(bytes > 0, "the allocation counter must see allocations for the zero figures to mean anything");
    }
}
