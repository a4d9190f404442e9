package org.jdapl.provider.ofi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
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
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.testsupport.AllocationMeter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The data path on libfabric's tcp provider allocates nothing per operation in steady state: 64-byte
 * send/receive and RDMA Write posts of a pre-built {@link LocalIov} and {@link RmrTriplet}, their
 * completions taken into a caller-owned {@link EventSlot}. The figure is the heap bytes the data
 * path's threads allocated ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}): the
 * calling thread and both IAs' progress threads (which read completions too), over {@value #OPS}
 * operations after a warm-up, the least of up to {@value #ROUNDS} rounds. Each operation's data and
 * completion are checked.
 */
@Timeout(300)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OfiZeroAllocationTest {
    private static final int WARM_UP = 20_000;
    private static final int OPS = 10_000;
    private static final int ROUNDS = 5;
    private static final int SIZE = 64;

    private OfiProvider provider;
    private InterfaceAdapter a;
    private InterfaceAdapter b;
    private Arena arena;
    private Side sa;
    private Side sb;

    /** One IA's objects: one DTO EVD for both queues, an EP, 64-byte source and target regions. */
    private static final class Side {
        final EventDispatcher evd;
        final EventDispatcher conn;
        final Endpoint ep;
        final MemorySegment srcMem;
        final MemorySegment dstMem;
        final LocalIov src;
        final LocalIov dst;
        final LocalMemoryRegion dstLmr;

        Side(InterfaceAdapter ia, Arena arena) {
            ProtectionZone pz = ia.createPz();
            evd = ia.createEvd(64, null, EnumSet.of(EvdFlag.DTO));
            conn = ia.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
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
        String missing = OfiHost.ensure("runtime");
        Assumptions.assumeTrue(missing == null, missing);
        provider = new OfiProvider();
        a = provider.open(new IaSpec("ofi-zero-a", "tcp lo", "", true, "test"), 16);
        b = provider.open(new IaSpec("ofi-zero-b", "tcp lo", "", true, "test"), 16);
        arena = Arena.ofShared();
        sa = new Side(a, arena);
        sb = new Side(b, arena);
        EventDispatcher cr = b.createEvd(4, null, EnumSet.of(EvdFlag.CR));
        PublicServicePoint psp = b.createPspAny(cr, PspFlag.CONSUMER);
        sa.ep.connect(a.query().attributes().address(), psp.query().connQual(), 5_000_000, new byte[0]);
        DatEvent.ConnectionRequest req = (DatEvent.ConnectionRequest) cr.waitEvent(5_000_000);
        req.request().accept(sb.ep, new byte[0]);
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, sb.conn.waitEvent(5_000_000).number());
        assertEquals(EventNumber.CONNECTION_ESTABLISHED, sa.conn.waitEvent(5_000_000).number());
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
        if (provider != null) {
            provider.deactivate();
        }
    }

    /** The least bytes of {@link AllocationMeter}'s rounds, this thread and both IAs' progress threads counted. */
    private static long allocatedOver(AllocationMeter.Op op) {
        return new AllocationMeter(WARM_UP, OPS, ROUNDS).threads(() -> {
            long[] ids = AllocationMeter.threadsNamed(n -> n.startsWith("jdapl-ofi-ofi-zero-"));
            if (ids.length != 2) {
                throw new AssertionError("expected two progress threads, found " + ids.length);
            }
            return ids;
        }).measure(op).leastBytes();
    }

    private static void take(EventDispatcher evd, EventSlot slot, long cookie, DtoOperation op) {
        for (long spins = 0; !evd.dequeue(slot); spins++) {
            if (spins > 500_000_000L) {
                throw new AssertionError("no completion of " + op + " " + cookie);
            }
            Thread.onSpinWait();
        }
        if (!slot.isDtoCompletion() || slot.status() != DtoStatus.SUCCESS || slot.cookie() != cookie
                || slot.operation() != op || slot.transferredLength() != SIZE) {
            throw new AssertionError("expected " + op + " " + cookie + " of " + SIZE + " bytes, got " + slot);
        }
    }

    /** OBJ_07: 64-byte send/receive, both ends polled by this thread into one reusable slot. */
    @Test
    void OBJ_07_tcpSendRecvAllocatesNothing() {
        EventSlot slot = new EventSlot();
        long bytes = allocatedOver(i -> {
            sa.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
            sb.ep.postRecv(sb.dst, i, Dat.COMPLETION_DEFAULT);
            sa.ep.postSend(sa.src, i, Dat.COMPLETION_DEFAULT);
            take(sb.evd, slot, i, DtoOperation.RECEIVE);
            take(sa.evd, slot, i, DtoOperation.SEND);
            if (sb.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                throw new AssertionError("message " + i + " did not arrive");
            }
        });
        assertEquals(0, bytes, "heap bytes allocated over " + OPS + " send/recv operations on ofi tcp");
    }

    /** OBJ_08: 64-byte RDMA Writes, each completion taken into a reusable slot; the bytes land. */
    @Test
    void OBJ_08_tcpRdmaWriteAllocatesNothing() {
        EventSlot slot = new EventSlot();
        RmrTriplet remote = new RmrTriplet(sb.dstLmr.rmrContext(), sb.dstLmr.query().registeredAddress(), SIZE);
        long bytes = allocatedOver(i -> {
            sa.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
            sa.ep.postRdmaWrite(sa.src, i, remote, Dat.COMPLETION_DEFAULT);
            take(sa.evd, slot, i, DtoOperation.RDMA_WRITE);
            if (sb.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                throw new AssertionError("write " + i + " did not land");
            }
        });
        assertEquals(0, bytes, "heap bytes allocated over " + OPS + " RDMA Writes on ofi tcp");
    }

    private static volatile long[] sink;

    @Test
    void theCounterSeesAnAllocation() {
        Assumptions.assumeTrue(a != null);
        long bytes = allocatedOver(i -> sink = new long[(int) (i & 7) + 1]);
        assertTrue(bytes > 0, "the allocation counter must see allocations for the zero figures to mean anything");
    }
}
