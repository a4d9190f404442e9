package org.jdapl.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * Bare hand-offs between two threads, the baselines of the loopback benchmark: a turn handed back and
 * forth through a volatile field with both threads spinning, the same with park/unpark, and the
 * spinning hand-off carrying 64 bytes each way.
 *
 * <p>The last one is the least a 64-byte message moves between two CPUs: the turn's line, and beside
 * it a line of payload per direction, written by {@code MemorySegment.copy} from the sender's native
 * memory before the turn is handed over and copied out into the receiver's after the turn is seen.
 * Against the plain spin it shows what the message's second line costs on the machine at hand.
 */
final class HandOffs {
    /** How the two threads hand the turn over. */
    enum Kind {
        /** Both spin on a volatile field. */
        SPIN,
        /** Both park until the other unparks them. */
        PARK,
        /** Both spin on the turn, which carries 64 bytes each way in a line of their own. */
        SPIN_64B
    }

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    /** The offsets of the turn and of each direction's payload in the shared segment, a line each. */
    private static final long TURN = 0;
    private static final long PING_DATA = 64;
    private static final long PONG_DATA = 128;
    private static final int SIZE = 64;

    private final MemorySegment shared;
    private volatile boolean stop;

    private HandOffs(MemorySegment shared) {
        this.shared = shared;
    }

    /** The turn, read as a volatile field is. */
    private long turn() {
        return (long) LONG.getVolatile(shared, TURN);
    }

    /** Hands the turn over, written as a volatile field is. */
    private void pass(long turn) {
        LONG.setVolatile(shared, TURN, turn);
    }

    /** Median microseconds of a round trip (ping's turn to pong's and back). */
    static double pingPong(Kind kind, long nanos) throws Exception {
        boolean spin = kind != Kind.PARK;
        boolean data = kind == Kind.SPIN_64B;
        try (Arena arena = Arena.ofShared()) {
            HandOffs s = new HandOffs(arena.allocate(3 * 64, 64));
            MemorySegment pingOut = arena.allocate(SIZE, 64);
            MemorySegment pingIn = arena.allocate(SIZE, 64);
            MemorySegment pongOut = arena.allocate(SIZE, 64);
            MemorySegment pongIn = arena.allocate(SIZE, 64);
            Thread ping = Thread.currentThread();
            Thread pong = Thread.ofPlatform().name("bench-pong").start(() -> {
                long seen = 0;
                long lastYield = System.nanoTime();
                while (!s.stop) {
                    if (s.turn() == seen + 1) {
                        if (data) {
                            MemorySegment.copy(s.shared, PING_DATA, pongIn, 0, SIZE);
                            MemorySegment.copy(pongOut, 0, s.shared, PONG_DATA, SIZE);
                        }
                        seen += 2;
                        s.pass(seen);
                        if (!spin) {
                            LockSupport.unpark(ping);
                        }
                        // The next wait spins its full while before it yields, as every polling loop's does.
                        lastYield = System.nanoTime();
                    } else if (spin) {
                        lastYield = EmuPingPong.spin(System.nanoTime(), lastYield);
                    } else {
                        LockSupport.parkNanos(1_000_000);
                    }
                }
            });
            EmuTcpBench.RoundTrips rtt = new EmuTcpBench.RoundTrips(nanos);
            long t0 = System.nanoTime();
            long mine = 0;
            do {
                if (data) {
                    MemorySegment.copy(pingOut, 0, s.shared, PING_DATA, SIZE);
                }
                s.pass(mine + 1);
                if (!spin) {
                    LockSupport.unpark(pong);
                }
                mine += 2;
                long lastYield = System.nanoTime();
                while (s.turn() != mine) {
                    if (spin) {
                        lastYield = EmuPingPong.spin(System.nanoTime(), lastYield);
                    } else {
                        LockSupport.parkNanos(1_000_000);
                    }
                }
                if (data) {
                    MemorySegment.copy(s.shared, PONG_DATA, pingIn, 0, SIZE);
                }
                t0 = rtt.add(t0);
            } while (!rtt.done());
            s.stop = true;
            LockSupport.unpark(pong);
            pong.join();
            return rtt.result().median();
        }
    }
}
