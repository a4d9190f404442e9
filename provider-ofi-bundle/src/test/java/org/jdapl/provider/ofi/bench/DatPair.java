package org.jdapl.provider.ofi.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EventSlot;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalIov;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;

/**
 * Two IAs of the ofi provider on the same {@code ia_params} in this JVM, an EP of each connected to
 * the other, for {@link OfiPingPongBench}: each side posts pre-built {@code LocalIov}s and polls its
 * EVDs with dat_evd_dequeue into a reusable {@link EventSlot}. The ping-pong's pinging side is the
 * calling thread; its ponging side a thread started for each measurement, bound to
 * {@code serverCpu} when that is not negative.
 */
final class DatPair implements BenchPair {
    static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);
    /** RDMA Writes outstanding in {@link #writeBandwidth}. */
    static final int WINDOW = 4;
    /** How long a side polls for a completion before it gives up. */
    private static final long STALL = TimeUnit.SECONDS.toNanos(120);

    private final OfiProvider provider = new OfiProvider();
    private final InterfaceAdapter a;
    private final InterfaceAdapter b;
    private final Arena arena = Arena.ofShared();
    private final Side sa;
    private final Side sb;
    private final int size;
    private final int serverCpu;

    DatPair(String name, String iaParams, int size, int serverCpu) {
        this.size = size;
        this.serverCpu = serverCpu;
        InterfaceAdapter ia = null;
        InterfaceAdapter ib = null;
        try {
            ia = provider.open(new IaSpec(name + "-a", iaParams, "", true, "bench"), 16);
            ib = provider.open(new IaSpec(name + "-b", iaParams, "", true, "bench"), 16);
            sa = new Side(ia, arena, size);
            sb = new Side(ib, arena, size);
            sb.ep.postRecv(sb.recvIov, 0, Dat.COMPLETION_DEFAULT);
            sa.ep.postRecv(sa.recvIov, 0, Dat.COMPLETION_DEFAULT);
            connect(ia, ib);
        } catch (RuntimeException | Error e) {
            close(ia, ib);
            throw e;
        }
        a = ia;
        b = ib;
    }

    @Override
    public SocketAddress address() {
        return a.query().attributes().address();
    }

    @Override
    public double pingPong(int n) throws InterruptedException {
        if (n == 0) {
            return 0;
        }
        Throwable[] failed = new Throwable[1];
        Thread ponger = Thread.ofPlatform().name("pong").start(() -> {
            try {
                ThreadAffinity.pin(serverCpu);
                pong(sb, n);
            } catch (Throwable t) {
                failed[0] = t;
            }
        });
        long t0 = System.nanoTime();
        try {
            ping(sa, n, false);
        } catch (RuntimeException e) {
            ponger.join(STALL / 1_000_000 + 10_000);
            if (failed[0] != null) {
                e.addSuppressed(failed[0]);
            }
            throw e;
        }
        long t1 = System.nanoTime();
        ponger.join(STALL / 1_000_000 + 10_000);
        if (ponger.isAlive() || failed[0] != null) {
            throw new IllegalStateException("the ponging side failed", failed[0]);
        }
        return (t1 - t0) / 1000.0 / n / 2;
    }

    @Override
    public double writeBandwidth(int n) {
        return writeBandwidth(sa, new RmrTriplet(sb.lmr.rmrContext(), sb.lmr.query().registeredAddress() + size, size), n);
    }

    /**
     * {@code n} RDMA Writes of {@code s}'s send region to {@code target}, {@value #WINDOW} outstanding:
     * MB/s (10^6 bytes per second).
     */
    static double writeBandwidth(Side s, RmrTriplet target, int n) {
        long size = target.length();
        long t0 = System.nanoTime();
        int posted = 0;
        int done = 0;
        while (done < n) {
            while (posted < n && posted - done < WINDOW) {
                s.ep.postRdmaWrite(s.sendIov, posted++, target, Dat.COMPLETION_DEFAULT);
            }
            poll(s, s.reqEvd);
            done++;
        }
        long t1 = System.nanoTime();
        return (double) n * size / ((t1 - t0) / 1e9) / 1e6;
    }

    @Override
    public void close() {
        close(a, b);
    }

    private void close(InterfaceAdapter ia, InterfaceAdapter ib) {
        try {
            try {
                if (ia != null) {
                    ia.close();
                }
            } finally {
                if (ib != null) {
                    ib.close();
                }
            }
        } finally {
            arena.close();
            provider.deactivate();
        }
    }

    private void connect(InterfaceAdapter ia, InterfaceAdapter ib) {
        EventDispatcher cr = ib.createEvd(4, null, EnumSet.of(EvdFlag.CR));
        PublicServicePoint psp = ib.createPspAny(cr, PspFlag.CONSUMER);
        sa.ep.connect(ib.query().attributes().address(), psp.query().connQual(), 30_000_000, new byte[0]);
        DatEvent.ConnectionRequest req = (DatEvent.ConnectionRequest) cr.waitEvent(30_000_000);
        req.request().accept(sb.ep, new byte[0]);
        expect(sb.conn.waitEvent(30_000_000), EventNumber.CONNECTION_ESTABLISHED);
        expect(sa.conn.waitEvent(30_000_000), EventNumber.CONNECTION_ESTABLISHED);
    }

    private static void expect(DatEvent e, EventNumber n) {
        if (e.number() != n) {
            throw new IllegalStateException("expected " + n + ", got " + e);
        }
    }

    /**
     * Takes the next completion of {@code s}'s EVD into its slot (polling); fails on an error, and
     * when none came within {@link #STALL} (looking at the clock once per 1024 empty polls).
     */
    static void poll(Side s, EventDispatcher evd) {
        long since = 0;
        for (int spins = 1; !evd.dequeue(s.slot); spins++) {
            Thread.onSpinWait();
            if ((spins & 1023) == 0) {
                long now = System.nanoTime();
                if (since == 0) {
                    since = now;
                } else if (now - since > STALL) {
                    throw new IllegalStateException("no completion on " + Thread.currentThread().getName()
                            + "'s EVD for " + TimeUnit.NANOSECONDS.toSeconds(STALL) + " s");
                }
            }
        }
        if (s.slot.status() != DtoStatus.SUCCESS) {
            throw new IllegalStateException("DTO failed: " + s.slot);
        }
    }

    /*
     * On a MSG IA the sends are unsignalled (DAT_COMPLETION_SUPPRESS_FLAG), as fi_pingpong's fi_inject
     * asks for no completion and the verbs provider's benchmark posts them against perftest: the
     * provider retires them with the signalled send it makes every half request queue. Between two
     * JVMs on an RDM IA ({@link TwoJvmPair}) each send is signalled and its completion taken, as the
     * peer's are ({@code signalled}).
     */
    static void ping(Side s, int n, boolean signalled) {
        for (int i = 0; i < n; i++) {
            if (signalled) {
                s.ep.postSend(s.sendIov, i, Dat.COMPLETION_DEFAULT);
                poll(s, s.recvEvd);
                s.ep.postRecv(s.recvIov, i, Dat.COMPLETION_DEFAULT);
                poll(s, s.reqEvd);
            } else {
                s.ep.postSend(s.sendIov, i, SUPPRESS);
                poll(s, s.recvEvd);
                s.ep.postRecv(s.recvIov, i, Dat.COMPLETION_DEFAULT);
                reap(s);
            }
        }
    }

    static void pong(Side s, int n) {
        for (int i = 0; i < n; i++) {
            poll(s, s.recvEvd);
            s.ep.postRecv(s.recvIov, i, Dat.COMPLETION_DEFAULT);
            s.ep.postSend(s.sendIov, i, SUPPRESS);
            reap(s);
        }
    }

    /**
     * One poll of the request EVD: it reports nothing (every send is unsignalled) unless a send
     * failed, but the consumer's poll keeps the IA's progress thread off its CQ, as the consumer of a
     * polled EVD should (a CQ nobody polls is the progress thread's, woken by every message).
     */
    private static void reap(Side s) {
        if (s.reqEvd.dequeue(s.slot) && s.slot.status() != DtoStatus.SUCCESS) {
            throw new IllegalStateException("DTO failed: " + s.slot);
        }
    }

    /** One side's objects. */
    static final class Side {
        final EventDispatcher recvEvd;
        final EventDispatcher reqEvd;
        final EventDispatcher conn;
        final Endpoint ep;
        final LocalMemoryRegion lmr;
        final LocalIov sendIov;
        /** The LMR's memory: the send region, then the receive region. */
        final MemorySegment mem;
        final LocalIov recvIov;
        final EventSlot slot = new EventSlot();

        /** Two regions of {@code size} bytes in one LMR: the first sends, the second receives. */
        Side(InterfaceAdapter ia, Arena arena, int size) {
            ProtectionZone pz = ia.createPz();
            recvEvd = ia.createEvd(64, null, EnumSet.of(EvdFlag.DTO));
            reqEvd = ia.createEvd(64, null, EnumSet.of(EvdFlag.DTO));
            conn = ia.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
            ep = ia.createEp(pz, recvEvd, reqEvd, conn, EpAttributes.defaults().withQueueDepths(8, 8));
            MemorySegment m = arena.allocate(2L * size, 4096);
            mem = m;
            lmr = ia.createLmr(pz, m, Dat.MEM_PRIV_ALL, VaType.VA);
            sendIov = LocalIov.of(new LmrTriplet(lmr, 0, size));
            recvIov = LocalIov.of(new LmrTriplet(lmr, size, size));
        }
    }
}
