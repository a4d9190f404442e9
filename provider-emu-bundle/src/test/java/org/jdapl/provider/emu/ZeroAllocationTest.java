package org.jdapl.provider.emu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Set;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.LocalIov;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.testsupport.AllocationMeter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The data path of both fabrics allocates nothing per operation in steady state: posts of a pre-built
 * {@link LocalIov} and {@link RmrTriplet} (send, receive, RDMA Write, RDMA Read) and dequeues or waits
 * into a caller-owned {@link EventSlot}. The bytes the calling thread allocated over
 * {@value #OPS} operations after a warm-up (the JVM's allocation counter,
 * {@code com.sun.management.ThreadMXBean}, {@link AllocationMeter}) must be exactly 0 in a round: a
 * behaviour, not a timing. On the tcp fabric the IAs' I/O threads, which read frames and answer
 * them too, are counted with the calling thread. Each operation's data and completion are checked too.
 */
@Timeout(120)
class ZeroAllocationTest {
    private static final int WARM_UP = 50_000;
    private static final int OPS = 100_000;
    private static final int ROUNDS = 5;
    /**
     * Rounds on the tcp fabric: three threads take part in each round trip, and the least of more
     * rounds keeps a round that a busy machine stretched (a warm-up that the JIT finished late) out
     * of the figure; a lock that its threads meet at never queues them ({@code LockDomain#lockSpinning}).
     */
    private static final int TCP_ROUNDS = 12;
    private static final int SIZE = 64;

    /**
     * The bytes the calling thread allocated over {@value #OPS} runs of {@code op} after a warm-up: the
     * least of up to {@value #ROUNDS} rounds ({@link AllocationMeter}).
     */
    private static long allocatedOver(AllocationMeter.Op op) {
        return allocatedOver(op, false);
    }

    /**
     * As {@link #allocatedOver(AllocationMeter.Op)}, counting too, if {@code ioThreads}, the tcp IAs' I/O
     * threads ({@code jdapl-emu-<IA>-io}), which read the frames and answer them, over up to
     * {@value #TCP_ROUNDS} rounds.
     */
    private static long allocatedOver(AllocationMeter.Op op, boolean ioThreads) {
        return new AllocationMeter(WARM_UP, OPS, ioThreads ? TCP_ROUNDS : ROUNDS)
                .threads(() -> ioThreads ? ioThreads() : new long[0])
                .measure(op)
                .leastBytes();
    }

    /** The ids of the two tcp IAs' I/O threads. */
    private static long[] ioThreads() {
        long[] ids = AllocationMeter.threadsNamed(n -> n.equals("jdapl-emu-emuA-io") || n.equals("jdapl-emu-emuB-io"));
        if (ids.length != 2) {
            throw new AssertionError("expected the two IAs' I/O threads, found " + ids.length);
        }
        return ids;
    }

    private static void expect(EventSlot slot, long cookie, DtoOperation op, long length) {
        if (!slot.isDtoCompletion() || slot.status() != DtoStatus.SUCCESS || slot.cookie() != cookie
                || slot.operation() != op || slot.transferredLength() != length) {
            throw new AssertionError("expected " + op + " " + cookie + " of " + length + " bytes, got " + slot);
        }
    }

    /** The two ends of a connection, 64-byte buffers at each, a pre-built iov of each and the RMR triplets. */
    private static final class Ends {
        final Endpoint a;
        final Endpoint b;
        final MemorySegment srcMem;
        final MemorySegment dstMem;
        final LocalIov src;
        final LocalIov dst;
        final RmrTriplet remoteDst;

        Ends(Fixture f) {
            Endpoint[] eps = f.connect();
            a = eps[0];
            b = eps[1];
            srcMem = f.memory(SIZE);
            dstMem = f.memory(SIZE);
            LocalMemoryRegion s = f.a.lmr(srcMem);
            LocalMemoryRegion d = f.b.lmr(dstMem);
            src = LocalIov.of(s);
            dst = LocalIov.of(d);
            remoteDst = new RmrTriplet(d.rmrContext(), d.query().registeredAddress(), SIZE);
        }
    }

    /** OBJ_07: send/recv, both ends polled by one thread into reusable slots; the data arrives. */
    @Test
    void OBJ_07_loopbackSendRecvAllocatesNothing() {
        try (Fixture f = new Fixture()) {
            Ends e = new Ends(f);
            EventSlot slot = new EventSlot();
            Set<CompletionFlag> signalled = Dat.COMPLETION_DEFAULT;
            long bytes = allocatedOver(i -> {
                e.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
                e.b.postRecv(e.dst, i, signalled);
                e.a.postSend(e.src, i, signalled);
                take(f.b, slot);
                expect(slot, i, DtoOperation.RECEIVE, SIZE);
                take(f.a, slot);
                expect(slot, i, DtoOperation.SEND, SIZE);
                if (e.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                    throw new AssertionError("message " + i + " did not arrive");
                }
            });
            assertEquals(0, bytes, "heap bytes allocated over " + OPS + " loopback send/recv round trips");
        }
    }

    /** Receives kept posted by the stream test: a window, as a sender of many messages keeps. */
    private static final int WINDOW = 32;

    /**
     * OBJ_07: a stream, {@value #WINDOW} receives posted ahead and as many sends, then every completion
     * dequeued in a batch: many receives are taken before any is posted again, and none allocates.
     */
    @Test
    void OBJ_07_loopbackStreamWithManyReceivesPostedAllocatesNothing() {
        try (Fixture f = new Fixture()) {
            Ends e = new Ends(f);
            EventSlot[] batch = new EventSlot[WINDOW];
            for (int k = 0; k < WINDOW; k++) {
                batch[k] = new EventSlot();
            }
            Set<CompletionFlag> signalled = Dat.COMPLETION_DEFAULT;
            Set<CompletionFlag> suppress = EnumSet.of(CompletionFlag.SUPPRESS);
            long bytes = allocatedOver(i -> {
                if (i % WINDOW != 0) {
                    return;
                }
                for (int k = 0; k < WINDOW; k++) {
                    e.b.postRecv(e.dst, i + k, signalled);
                }
                for (int k = 0; k < WINDOW; k++) {
                    e.a.postSend(e.src, i + k, suppress);
                }
                int n = f.b.evd.dequeue(batch, WINDOW);
                if (n != WINDOW) {
                    throw new AssertionError("loopback receives complete before the send returns: " + n);
                }
                for (int k = 0; k < WINDOW; k++) {
                    expect(batch[k], i + k, DtoOperation.RECEIVE, SIZE);
                }
            });
            assertEquals(0, bytes, "heap bytes allocated over " + OPS / WINDOW + " windows of " + WINDOW
                    + " receives and sends");
        }
    }

    /** OBJ_07: sends with SUPPRESS and receives waited for with dat_evd_wait into a reusable slot. */
    @Test
    void OBJ_07_loopbackSuppressedSendAndWaitAllocateNothing() {
        try (Fixture f = new Fixture()) {
            Ends e = new Ends(f);
            EventSlot slot = new EventSlot();
            Set<CompletionFlag> suppress = EnumSet.of(CompletionFlag.SUPPRESS);
            long bytes = allocatedOver(i -> {
                e.b.postRecv(e.dst, i, Dat.COMPLETION_DEFAULT);
                e.a.postSend(e.src, i, suppress);
                f.b.evd.waitEvent(Fixture.WAIT, 1, slot);
                expect(slot, i, DtoOperation.RECEIVE, SIZE);
            });
            assertEquals(0, bytes, "heap bytes allocated over " + OPS + " suppressed sends and waits");
            assertEquals(0, f.a.evd.count(), "a suppressed send queued no completion");
        }
    }

    /**
     * Waits of the parking test: warm-up, then each measured round, and its rounds. The waiter and the
     * poster meet at the EVD's queue lock on every wake-up, and one that queues past its bounded tries
     * (the holder off the CPU, on a loaded machine) costs a node of the JDK's in that round only.
     */
    private static final int PARKED_WARM_UP = 2_000;
    private static final int PARKED_OPS = 1_000;
    private static final int PARKED_ROUNDS = 12;

    /**
     * OBJ_07: a dat_evd_wait into a reusable slot that parks (the receive is sent only once the waiting
     * thread is parked) and the send that wakes it allocate nothing: neither the waiter's thread nor
     * the poster's. The least of up to {@value #PARKED_ROUNDS} rounds of {@value #PARKED_OPS} waits
     * ({@link AllocationMeter}), the waiter's thread counted with the poster's.
     */
    @Test
    void OBJ_07_loopbackWaitThatParksAllocatesNothing() throws Exception {
        try (Fixture f = new Fixture()) {
            Ends e = new Ends(f);
            Set<CompletionFlag> suppress = EnumSet.of(CompletionFlag.SUPPRESS);
            // The waiter takes receives until the one with the cookie STOP, sent once the rounds are done.
            java.util.concurrent.atomic.AtomicLong taken = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread waiter = Thread.ofPlatform().name("zero-alloc-waiter").start(() -> {
                EventSlot slot = new EventSlot();
                try {
                    for (long n = 0; ; n++) {
                        f.b.evd.waitEvent(Fixture.WAIT, 1, slot);
                        if (slot.cookie() == STOP) {
                            return;
                        }
                        expect(slot, n, DtoOperation.RECEIVE, SIZE);
                        taken.set(n + 1);
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            long[] sent = {0};
            AllocationMeter.Result r;
            try {
                r = new AllocationMeter(PARKED_WARM_UP, PARKED_OPS, PARKED_ROUNDS)
                        .threads(() -> new long[] {waiter.threadId()})
                        .measure(i -> {
                            long n = sent[0]++;
                            e.b.postRecv(e.dst, n, Dat.COMPLETION_DEFAULT);
                            awaitParked(waiter, failure);
                            e.a.postSend(e.src, n, suppress);
                            for (long spins = 0; taken.get() <= n; spins++) {
                                if (failure.get() != null) {
                                    throw new AssertionError("the waiter failed", failure.get());
                                }
                                if (spins > 100_000_000L) {
                                    throw new AssertionError("wait " + n + " did not return");
                                }
                                Thread.onSpinWait();
                            }
                        });
            } finally {
                e.b.postRecv(e.dst, STOP, Dat.COMPLETION_DEFAULT);
                e.a.postSend(e.src, STOP, suppress);
                waiter.join(10_000);
            }
            if (failure.get() != null) {
                throw new AssertionError("the waiter failed", failure.get());
            }
            assertEquals(0, r.leastBytes(), "heap bytes allocated over " + PARKED_OPS
                    + " parked waits and their sends (least of " + r.rounds() + " rounds)");
        }
    }

    /** The cookie of the receive that ends the waiter of the parking test. */
    private static final long STOP = -1;

    /** Returns once {@code waiter} is parked (bounded), or at once if it failed. */
    private static void awaitParked(Thread waiter, java.util.concurrent.atomic.AtomicReference<Throwable> failure) {
        for (long spins = 0; failure.get() == null; spins++) {
            Thread.State s = waiter.getState();
            if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
                return;
            }
            if (spins > 10_000_000L) {
                throw new AssertionError("the waiter did not park: " + s);
            }
            Thread.onSpinWait();
        }
    }

    /** OBJ_08: RDMA Write and RDMA Read of 64 bytes move the bytes and allocate nothing. */
    @Test
    void OBJ_08_loopbackRdmaWriteAndReadAllocateNothing() {
        try (Fixture f = new Fixture()) {
            Ends e = new Ends(f);
            EventSlot[] batch = {new EventSlot(), new EventSlot()};
            long bytes = allocatedOver(i -> {
                e.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
                e.a.postRdmaWrite(e.src, 2 * i, e.remoteDst, Dat.COMPLETION_DEFAULT);
                e.a.postRdmaRead(e.src, 2 * i + 1, e.remoteDst, Dat.COMPLETION_DEFAULT);
                int n = f.a.evd.dequeue(batch, 2);
                if (n != 2) {
                    throw new AssertionError("a loopback RDMA completes before its post returns: " + n + " of 2");
                }
                expect(batch[0], 2 * i, DtoOperation.RDMA_WRITE, SIZE);
                expect(batch[1], 2 * i + 1, DtoOperation.RDMA_READ, SIZE);
                if (e.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                    throw new AssertionError("write " + i + " did not land");
                }
            });
            assertEquals(0, bytes, "heap bytes allocated over " + OPS + " RDMA Write + Read pairs");
        }
    }

    /**
     * OBJ_07: send/recv on the tcp fabric over 127.0.0.1, both ends polled by one thread into a
     * reusable slot; the calling thread and both I/O threads allocate nothing per round trip.
     */
    @Test
    void OBJ_07_tcpSendRecvAllocatesNothing() {
        try (Fixture f = Fixture.tcp()) {
            Ends e = new Ends(f);
            EventSlot slot = new EventSlot();
            Set<CompletionFlag> signalled = Dat.COMPLETION_DEFAULT;
            long bytes = allocatedOver(i -> {
                e.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
                e.b.postRecv(e.dst, i, signalled);
                e.a.postSend(e.src, i, signalled);
                take(f.b, slot);
                expect(slot, i, DtoOperation.RECEIVE, SIZE);
                take(f.a, slot);
                expect(slot, i, DtoOperation.SEND, SIZE);
                if (e.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                    throw new AssertionError("message " + i + " did not arrive");
                }
            }, true);
            System.out.printf("tcp 64 B send/recv: %.1f B/op (%d bytes over %d)%n",
                    (double) bytes / OPS, bytes, OPS);
            assertEquals(0, bytes, "heap bytes allocated over " + OPS + " tcp send/recv round trips");
        }
    }

    /** OBJ_08: a 64-byte RDMA Write on the tcp fabric lands and allocates nothing (post, dequeue). */
    @Test
    void OBJ_08_tcpRdmaWriteAllocatesNothing() {
        try (Fixture f = Fixture.tcp()) {
            Ends e = new Ends(f);
            EventSlot slot = new EventSlot();
            long bytes = allocatedOver(i -> {
                e.srcMem.set(ValueLayout.JAVA_LONG, 0, i);
                e.a.postRdmaWrite(e.src, i, e.remoteDst, Dat.COMPLETION_DEFAULT);
                take(f.a, slot);
                expect(slot, i, DtoOperation.RDMA_WRITE, SIZE);
                if (e.dstMem.get(ValueLayout.JAVA_LONG, 0) != i) {
                    throw new AssertionError("write " + i + " did not land");
                }
            }, true);
            System.out.printf("tcp 64 B RDMA Write: %.1f B/op (%d bytes over %d)%n",
                    (double) bytes / OPS, bytes, OPS);
            assertEquals(0, bytes, "heap bytes allocated over " + OPS + " tcp RDMA Writes");
        }
    }

    /** Polls {@code side}'s EVD into {@code slot} until an event is there (bounded). */
    private static void take(Fixture.Side side, EventSlot slot) {
        for (long spins = 0; !side.evd.dequeue(slot); spins++) {
            if (spins > 100_000_000L) {
                throw new AssertionError("no event");
            }
            Thread.onSpinWait();
        }
    }

    /** Where the control measurement's arrays escape to, so that none is optimised away. */
    private static volatile long[] sink;

    @Test
    void theCounterSeesAnAllocation() {
        long bytes = allocatedOver(i -> sink = new long[(int) (i & 7) + 1]);
        assertTrue(bytes > 0, "the allocation counter must see allocations for the zero figures to mean anything");
    }
}
