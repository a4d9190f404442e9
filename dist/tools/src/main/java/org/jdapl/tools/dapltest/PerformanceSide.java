package org.jdapl.tools.dapltest;

import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.ToolException;

/**
 * dapltest {@code -T P} on one side: one endpoint pair; the client keeps up to PIPELINE operations
 * in flight, first WARMUP untimed operations, then the timed ones, and times them. The server is
 * passive for RDMA Write and Read (it hands out its buffer in READY and waits for the client's
 * final READY); for sends it posts the receives and grants them to the client as credits (at most
 * PIPELINE outstanding), so that no send ever finds no receive. Completions are waited for
 * ({@code -m b}) or polled ({@code -m p}).
 */
final class PerformanceSide {
    private static final long C_READY = 1;
    private static final long C_FINAL = 2;
    private static final long C_CREDIT = 3;
    private static final long C_RING = 1L << 40;
    private static final long C_DATA = 1L << 20;
    private static final int RING = 8;
    /** How long the server waits for the client's end of the test. */
    private static final long SERVER_END_MICROS = 600_000_000L;

    private final Side side;
    private final DapltestOptions options;
    private final Op op;
    /** Operations done, for the progress line. */
    final AtomicLong done = new AtomicLong();

    PerformanceSide(Side side, DapltestOptions options) {
        this.side = side;
        this.options = options;
        this.op = options.ops().getFirst();
    }

    private Conn open(Conn.Group group, int recvSlots) {
        return new Conn(group, op.size(), Conn.SMALL_SLOT, 2, recvSlots, options.pipeline() + RING + 4,
                op.segments(), options.pipeline());
    }

    /**
     * The client: connects with {@code connector}, runs the warm-up and the timed operations.
     *
     * @return the nanoseconds the timed operations took
     */
    long runClient(TransactionSide.Connector connector) {
        Conn.Group group = new Conn.Group(side, 1, options.pipeline() + RING + 4);
        Conn c = null;
        try {
            c = open(group, 1 + RING);
            c.postRecv(0, C_READY);
            connector.connect(c, 0, "the performance test endpoint");
            c.send(0, ready(c, 0), C_READY);
            group.requests.take(C_READY, DtoOperation.SEND, "READY sent");
            Wire.Message m = c.message(0, group.receives.take(C_READY, DtoOperation.RECEIVE, "the server's READY"));
            RmrTriplet remote = new RmrTriplet((int) m.v0(), m.v1(), op.size());
            Client state = new Client(c, group, remote, m.v3());
            for (int i = 0; i < RING; i++) {
                c.postRecv(1 + i, C_RING + i);
            }
            state.run(options.warmup());
            long start = System.nanoTime();
            state.run(options.iterations());
            long elapsed = System.nanoTime() - start;
            state.finish();
            c.disconnect("the performance test endpoint");
            return elapsed;
        } finally {
            if (c != null) {
                c.free();
            }
            if (!side.ia().isFreed()) {
                group.free();
            }
        }
    }

    private Wire.Message ready(Conn c, long credits) {
        return new Wire.Message(Wire.MSG_READY, c.rmrContext, c.address, c.dataSize, credits);
    }

    /** The client's loop state: posted, completed, credits and the ring of control receives. */
    private final class Client {
        private final Conn c;
        private final Conn.Group group;
        private final RmrTriplet remote;
        private final int limit;
        private long credits;
        private long posted;
        private long completed;
        private long ring;

        Client(Conn c, Conn.Group group, RmrTriplet remote, long credits) {
            this.c = c;
            this.group = group;
            this.remote = remote;
            this.credits = credits;
            this.limit = op.kind() == Op.Kind.RR
                    ? Math.max(1, Math.min(options.pipeline(), c.ep.query().attributes().maxRdmaReadOut()))
                    : options.pipeline();
        }

        void run(long count) {
            long end = posted + count;
            var iov = c.segments(0, op.size(), op.segments());
            DtoOperation operation = switch (op.kind()) {
                case SR -> DtoOperation.SEND;
                case RW -> DtoOperation.RDMA_WRITE;
                case RR -> DtoOperation.RDMA_READ;
            };
            while (completed < end) {
                while (posted < end && posted - completed < limit && (op.kind() != Op.Kind.SR || credits > 0)) {
                    long cookie = C_DATA + posted;
                    switch (op.kind()) {
                        case SR -> c.ep.postSend(iov, cookie, Dat.COMPLETION_DEFAULT);
                        case RW -> c.ep.postRdmaWrite(iov, cookie, remote, Dat.COMPLETION_DEFAULT);
                        case RR -> c.ep.postRdmaRead(iov, cookie, remote, Dat.COMPLETION_DEFAULT);
                    }
                    credits--;
                    posted++;
                }
                if (posted > completed) {
                    group.requests.take(C_DATA + completed, operation, op + " " + (completed + 1));
                    completed++;
                    done.incrementAndGet();
                } else {
                    control(Wire.MSG_CREDIT);
                }
            }
        }

        /** Takes the next control message, which must be of {@code type}; a CREDIT adds its credits. */
        private Wire.Message control(int type) {
            int slot = 1 + (int) (ring % RING);
            DatEvent.DtoCompletion r = group.receives.take(C_RING + ring, DtoOperation.RECEIVE, "the server's "
                    + (type == Wire.MSG_CREDIT ? "credit" : "READY"));
            Wire.Message m = c.message(slot, r);
            c.postRecv(slot, C_RING + ring + RING);
            ring++;
            if (m.type() == Wire.MSG_CREDIT) {
                credits += m.v0();
            } else if (m.type() != type) {
                throw ToolException.failure("expected a message of type " + type + " from the server, got " + m.type());
            }
            return m;
        }

        /** Sends the final READY (with a credit, for sends) and waits for the server's. */
        void finish() {
            while (op.kind() == Op.Kind.SR && credits < 1) {
                control(Wire.MSG_CREDIT);
            }
            c.send(1, ready(c, 0), C_FINAL);
            group.requests.take(C_FINAL, DtoOperation.SEND, "the final READY sent");
            Wire.Message m;
            do {
                m = control(Wire.MSG_READY);
            } while (m.type() != Wire.MSG_READY);
        }
    }

    /** The server: accepts {@code request} and serves the client's operations to the end. */
    void runServer(ConnectionRequest request) {
        Conn.Group group = new Conn.Group(side, 1, options.pipeline() + RING + 4);
        Conn c = null;
        try {
            c = open(group, 2);
            c.postRecv(0, C_READY);
            long total = options.warmup() + options.iterations();
            boolean sends = op.kind() == Op.Kind.SR;
            // The receives in the order the client's sends consume them: the data, then the final READY.
            long sequence = sends ? total + 1 : 1;
            long posted = 0;
            long initial = sends ? Math.min(options.pipeline(), sequence) : 0;
            var iov = c.segments(0, op.size(), op.segments());
            while (posted < Math.max(1, initial)) {
                postNext(c, iov, posted++, total, sends);
            }
            c.accept(request, "the performance test endpoint");
            c.send(0, ready(c, initial), C_READY);
            group.requests.take(C_READY, DtoOperation.SEND, "READY sent");
            group.receives.take(C_READY, DtoOperation.RECEIVE, "the client's READY");
            Completions end = new Completions(group.recv, SERVER_END_MICROS, false);
            if (sends) {
                long batch = Math.max(1, options.pipeline() / 2);
                long pending = 0;
                for (long i = 0; i < total; i++) {
                    DatEvent.DtoCompletion r = end.take(C_DATA + i, DtoOperation.RECEIVE, op + " receive " + (i + 1));
                    if (r.transferredLength() != op.size()) {
                        throw ToolException.failure(op + ": received " + r.transferredLength() + " bytes");
                    }
                    if (posted < sequence) {
                        postNext(c, iov, posted++, total, true);
                        pending++;
                    }
                    if (pending >= batch || (posted == sequence && pending > 0)) {
                        c.send(1, new Wire.Message(Wire.MSG_CREDIT, pending, 0, 0, 0), C_CREDIT);
                        group.requests.take(C_CREDIT, DtoOperation.SEND, "a credit sent");
                        pending = 0;
                    }
                    done.incrementAndGet();
                }
            }
            end.take(C_FINAL, DtoOperation.RECEIVE, "the client's final READY");
            c.send(0, ready(c, 0), C_FINAL);
            group.requests.take(C_FINAL, DtoOperation.SEND, "the final READY sent");
            c.awaitDisconnect("the performance test endpoint");
        } finally {
            if (c != null) {
                c.free();
            }
            if (!side.ia().isFreed()) {
                group.free();
            }
        }
    }

    /** Posts receive {@code i} of the sequence: a data receive, or the final READY's after the last. */
    private static void postNext(Conn c, java.util.List<org.jdapl.dat.LmrTriplet> iov, long i, long total,
                                 boolean sends) {
        if (sends && i < total) {
            c.ep.postRecv(iov, C_DATA + i, Dat.COMPLETION_DEFAULT);
        } else {
            c.postRecv(1, C_FINAL);
        }
    }
}
