package org.jdapl.provider.ofi.bench;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.provider.emu.EmuProvider;
import org.jdapl.provider.ofi.OfiProvider;

/**
 * The ponging side of {@link TwoJvmPair} in a JVM of its own: {@code BenchPeer <ia_params> <size>} opens
 * an IA, posts a receive of {@code size} bytes, prints {@code listening <host> <port> <conn_qual>} (its
 * IA's address and its PSP's qualifier), accepts one connection with its region's RMR context and
 * address as private data (4 + 8 bytes, big-endian) and then answers every message with one of the
 * same size (as {@link DatPair#pong} does) until a receive completes other than SUCCESS: the
 * connection's end flushes it. It prints {@code done} and exits 0. Every wait is bounded: the
 * connection request 60 s; between two messages {@value #IDLE_SECONDS} s, or less when the JVM that
 * started this one has ended; then it exits 1. After {@value #SPIN_MILLIS} ms without a message it
 * polls once per millisecond instead of spinning.
 */
public final class BenchPeer {
    private static final long IDLE_SECONDS = 900;
    private static final long SPIN_MILLIS = 20;
    /**
     * A message whose first byte is this asks the peer to poll without sleeping until the next
     * message: the bench's RDMA Writes follow ({@link TwoJvmPair#writeBandwidth}).
     */
    static final byte HOLD = 0x48;
    private static final long CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private BenchPeer() {
    }

    public static void main(String[] args) throws Exception {
        String iaParams = args[0];
        int size = Integer.parseInt(args[1]);
        DatProvider provider = args.length > 2 && args[2].equals("emu") ? new EmuProvider() : new OfiProvider();
        int status = 1;
        try (InterfaceAdapter ia = provider.open(new IaSpec("ofi-bench-peer", iaParams, "", true, "bench"), 16);
             Arena arena = Arena.ofShared()) {
            DatPair.Side side = new DatPair.Side(ia, arena, size);
            side.ep.postRecv(side.recvIov, 0, Dat.COMPLETION_DEFAULT);
            EventDispatcher cr = ia.createEvd(4, null, EnumSet.of(EvdFlag.CR));
            PublicServicePoint psp = ia.createPspAny(cr, PspFlag.CONSUMER);
            InetSocketAddress at = (InetSocketAddress) ia.query().attributes().address();
            System.out.println("listening " + at.getAddress().getHostAddress() + " " + at.getPort() + " "
                    + psp.query().connQual());
            System.out.flush();
            DatEvent.ConnectionRequest req = (DatEvent.ConnectionRequest) cr.waitEvent(60_000_000);
            ByteBuffer pd = ByteBuffer.allocate(12).putInt(side.lmr.rmrContext())
                    .putLong(side.lmr.query().registeredAddress() + size);
            req.request().accept(side.ep, pd.array());
            DatEvent up = side.conn.waitEvent(30_000_000);
            if (up.number() != EventNumber.CONNECTION_ESTABLISHED) {
                throw new IllegalStateException("expected CONNECTION_ESTABLISHED, got " + up);
            }
            if (pong(side)) {
                status = 0;
                System.out.println("done");
            }
        } catch (RuntimeException e) {
            e.printStackTrace();
        } finally {
            deactivate(provider);
        }
        System.out.flush();
        System.exit(status);
    }

    /** Ends a libfabric provider as its bundle's deactivation does (the emulated one's IAs are closed). */
    static void deactivate(DatProvider provider) {
        if (provider instanceof OfiProvider o) {
            o.deactivate();
        }
    }

    /** Answers messages until a receive does not succeed (true) or a wait ran out (false). */
    private static boolean pong(DatPair.Side s) throws InterruptedException {
        boolean hold = false;
        long recvAt = s.mem.byteSize() / 2;
        for (long i = 0;; i++) {
            if (!poll(s, s.recvEvd, hold)) {
                return false;
            }
            if (s.slot.status() != DtoStatus.SUCCESS) {
                return true;
            }
            hold = s.mem.get(java.lang.foreign.ValueLayout.JAVA_BYTE, recvAt) == HOLD;
            s.ep.postRecv(s.recvIov, i, Dat.COMPLETION_DEFAULT);
            s.ep.postSend(s.sendIov, i, Dat.COMPLETION_DEFAULT);
            if (!poll(s, s.reqEvd, false) || s.slot.status() != DtoStatus.SUCCESS) {
                System.err.println("bench peer: send " + i + " ended " + s.slot.status());
                return false;
            }
        }
    }

    /**
     * Takes the next completion into the slot, spinning; after {@value #SPIN_MILLIS} ms without one it
     * sleeps 1 ms between polls (the IA's progress thread keeps the provider going), so that an idle
     * peer takes no CPU from fi_pingpong's rounds, unless {@code hold} (the RDMA Writes of the bench
     * are under way: it spins on). False when none came within {@value #IDLE_SECONDS} s
     * or the JVM that started this one has ended.
     */
    /** The JVM that started this one (looked up once: each lookup reads {@code /proc}). */
    private static final ProcessHandle PARENT = ProcessHandle.current().parent().orElse(null);

    private static boolean poll(DatPair.Side s, EventDispatcher evd, boolean hold) throws InterruptedException {
        long since = 0;
        long checked = 0;
        boolean idle = false;
        ProcessHandle parent = PARENT;
        for (int spins = 1; !evd.dequeue(s.slot); spins++) {
            if (idle) {
                Thread.sleep(1);
            } else {
                Thread.onSpinWait();
                if ((spins & 0xfff) != 0) {
                    continue;
                }
            }
            long now = System.nanoTime();
            if (since == 0) {
                since = now;
            } else if (now - since > TimeUnit.MILLISECONDS.toNanos(SPIN_MILLIS) && now - checked > CHECK_NANOS) {
                idle = !hold;
                checked = idle ? 0 : now; // a holding peer looks at its parent every 100 ms, not every 4096 polls
                if (now - since > TimeUnit.SECONDS.toNanos(IDLE_SECONDS) || parent != null && !parent.isAlive()) {
                    System.err.println("bench peer: no completion for " + (now - since) / 1_000_000_000
                            + " s, or the JVM that started it ended");
                    return false;
                }
            }
        }
        return true;
    }
}
