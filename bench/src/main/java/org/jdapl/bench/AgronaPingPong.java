package org.jdapl.bench;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * The baseline of the in-JVM fabric: a 64-byte ping-pong between two threads through Agrona's
 * {@link OneToOneRingBuffer}, one ring each way, both threads busy-spinning on {@code read} (with the
 * same spin-wait hint and occasional yield as every other polling loop of the benchmark). A record is
 * written from the sender's buffer and copied out by the receiver's handler into its own, as a
 * 64-byte send lands in a posted receive.
 */
final class AgronaPingPong {
    private static final int SIZE = 64;
    private static final int MSG = 1;
    private static final int CAPACITY = 64 * 1024;

    private final OneToOneRingBuffer ping = ring();
    private final OneToOneRingBuffer pong = ring();
    private volatile boolean stop;

    private AgronaPingPong() {
    }

    private static OneToOneRingBuffer ring() {
        ByteBuffer bytes = BufferUtil.allocateDirectAligned(CAPACITY + RingBufferDescriptor.TRAILER_LENGTH, 64);
        return new OneToOneRingBuffer(new UnsafeBuffer(bytes));
    }

    /** A receiver's handler: copies each record into its own buffer and counts it. */
    private static final class Sink implements MessageHandler {
        private final UnsafeBuffer into = new UnsafeBuffer(BufferUtil.allocateDirectAligned(SIZE, 64));
        private long received;

        @Override
        public void onMessage(int msgTypeId, org.agrona.MutableDirectBuffer buffer, int index, int length) {
            buffer.getBytes(index, into, 0, length);
            received++;
        }
    }

    /** Median microseconds of a round trip of 64-byte records. */
    static double pingPong(long nanos) throws Exception {
        AgronaPingPong s = new AgronaPingPong();
        UnsafeBuffer pingOut = new UnsafeBuffer(BufferUtil.allocateDirectAligned(SIZE, 64));
        UnsafeBuffer pongOut = new UnsafeBuffer(BufferUtil.allocateDirectAligned(SIZE, 64));
        Sink pingIn = new Sink();
        Thread pongThread = Thread.ofPlatform().name("bench-agrona-pong").start(() -> {
            Sink pongIn = new Sink();
            long lastYield = System.nanoTime();
            while (!s.stop) {
                if (s.ping.read(pongIn, 1) > 0) {
                    while (!s.pong.write(MSG, pongOut, 0, SIZE)) {
                        Thread.onSpinWait();
                    }
                    // The next wait spins its full while before it yields, as every polling loop's does.
                    lastYield = System.nanoTime();
                } else {
                    lastYield = EmuPingPong.spin(System.nanoTime(), lastYield);
                }
            }
        });
        try {
            EmuTcpBench.RoundTrips rtt = new EmuTcpBench.RoundTrips(nanos);
            long t0 = System.nanoTime();
            do {
                if (!s.ping.write(MSG, pingOut, 0, SIZE)) {
                    throw new IllegalStateException("the ping ring is full");
                }
                long lastYield = System.nanoTime();
                while (s.pong.read(pingIn, 1) == 0) {
                    lastYield = EmuPingPong.spin(System.nanoTime(), lastYield);
                }
                t0 = rtt.add(t0);
            } while (!rtt.done());
            return rtt.result().median();
        } finally {
            s.stop = true;
            pongThread.join();
        }
    }
}
