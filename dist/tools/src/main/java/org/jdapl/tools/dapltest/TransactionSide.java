package org.jdapl.tools.dapltest;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.Patterns;
import org.jdapl.tools.ToolException;

/**
 * One thread of dapltest {@code -T T} on one side (client or server): its endpoints, connected to
 * the other side's, run the operation list iteration after iteration. Both sides know the list and
 * each does its part: the initiator of an operation posts it, the target posts the receive it needs.
 *
 * <p>Per endpoint and iteration k, a side posts its receives in the order the peer sends: the
 * READY of iteration k (posted one iteration ahead), a receive for each operation the peer starts
 * (the data of a send; a SYNC after an RDMA Write or Read), then the READY of k+1. It then fills
 * its buffers, sends READY and waits for the peer's: from then on the peer may send, write and read.
 * The initiator of an RDMA Write or Read sends SYNC once it completed, so that the target checks
 * written data only once it landed and refills read data only once it was read. A final READY
 * exchange after the last iteration ends the test. With validation, sources get a fresh pattern per
 * thread, iteration, operation and endpoint, and sinks are overwritten first.
 */
final class TransactionSide {
    private static final int READY_SLOTS = 2;
    private static final int SYNC_SLOT = 2;
    private static final int SEND_READY = 0;
    private static final int SEND_SYNC = 1;

    private final Side side;
    private final DapltestOptions options;
    private final boolean client;
    private final int thread;
    private final List<Op> ops;
    private final long[] offsets;
    private final List<Conn> conns = new ArrayList<>();
    private final RmrTriplet[] remote;
    private Conn.Group group;
    /** Per operation of the list: how many ran (counted by the client). */
    final AtomicLong[] counts;
    /** Operations done, for the progress line. */
    final AtomicLong done;

    TransactionSide(Side side, DapltestOptions options, boolean client, int thread, AtomicLong[] counts,
                    AtomicLong done) {
        this.side = side;
        this.options = options;
        this.client = client;
        this.thread = thread;
        this.ops = options.ops();
        this.counts = counts;
        this.done = done;
        this.offsets = new long[ops.size() + 1];
        for (int o = 0; o < ops.size(); o++) {
            offsets[o + 1] = offsets[o] + ((ops.get(o).size() + 63) & ~63L);
        }
        this.remote = new RmrTriplet[options.endpoints()];
    }

    /** The depth of an endpoint's queues: every message and operation of one iteration, and two READYs. */
    private int depth() {
        return 2 * ops.size() + 4;
    }

    /**
     * Connects the endpoints (the client to {@code session}'s server; the server accepts the requests
     * {@code requests} hands it by endpoint index), runs the iterations, disconnects and frees.
     */
    void run(Connector connector, IntFunction<ConnectionRequest> requests) {
        try {
            group = new Conn.Group(side, options.endpoints(), depth());
            for (int j = 0; j < options.endpoints(); j++) {
                Conn c = new Conn(group, offsets[ops.size()], Conn.SMALL_SLOT, 2, 3, depth(),
                        options.maxSegments(), ops.size());
                conns.add(c);
                c.postRecv(0, cookie(0, 0, j));
                String what = "thread " + thread + " endpoint " + j;
                if (client) {
                    connector.connect(c, thread * options.endpoints() + j, what);
                } else {
                    c.accept(requests.apply(thread * options.endpoints() + j), what + " accept");
                }
            }
            for (int k = 0; k <= options.iterations(); k++) {
                iteration(k);
            }
            for (Conn c : conns) {
                if (client) {
                    c.disconnect("thread " + thread);
                } else {
                    c.awaitDisconnect("thread " + thread);
                }
            }
        } finally {
            free();
        }
    }

    /** How a client endpoint reaches the server. */
    interface Connector {
        void connect(Conn conn, int index, String what);
    }

    private void free() {
        for (Conn c : conns) {
            c.free();
        }
        if (group != null && !side.ia().isFreed()) {
            group.free();
        }
    }

    private static long cookie(long k, int tag, int j) {
        return (k << 24) | ((long) tag << 12) | j;
    }

    private boolean initiates(Op op) {
        return op.clientInitiates() == client;
    }

    private boolean isSource(Op op) {
        return op.kind() == Op.Kind.RR ? !initiates(op) : initiates(op);
    }

    private long seed(int k, int o, int j) {
        return ((long) thread << 48) ^ ((long) k << 20) ^ ((long) j << 10) ^ o;
    }

    private void iteration(int k) {
        boolean last = k == options.iterations();
        int n = conns.size();
        if (!last) {
            for (int j = 0; j < n; j++) {
                Conn c = conns.get(j);
                for (int o = 0; o < ops.size(); o++) {
                    Op op = ops.get(o);
                    if (options.validate()) {
                        Patterns.fill(c.data(offsets[o], op.size()), isSource(op) ? seed(k, o, j) : ~seed(k, o, j));
                    }
                    if (!initiates(op)) {
                        if (op.kind() == Op.Kind.SR) {
                            c.ep.postRecv(c.segments(offsets[o], op.size(), op.segments()), cookie(k, 1 + 2 * o, j),
                                    Dat.COMPLETION_DEFAULT);
                        } else {
                            c.postRecv(SYNC_SLOT, cookie(k, 2 + 2 * o, j));
                        }
                    }
                }
                c.postRecv((k + 1) % READY_SLOTS, cookie(k + 1, 0, j));
            }
        }
        for (int j = 0; j < n; j++) {
            Conn c = conns.get(j);
            c.send(SEND_READY, new Wire.Message(Wire.MSG_READY, c.rmrContext, c.address, c.dataSize, 0), cookie(k, 0, j));
        }
        for (int j = 0; j < n; j++) {
            Conn c = conns.get(j);
            group.requests.take(cookie(k, 0, j), DtoOperation.SEND, "READY " + k + " sent");
            DatEvent.DtoCompletion r = group.receives.take(cookie(k, 0, j), DtoOperation.RECEIVE, "READY " + k);
            Wire.Message m = c.message(k % READY_SLOTS, r);
            if (m.type() != Wire.MSG_READY) {
                throw ToolException.failure("expected READY from the peer, got message type " + m.type());
            }
            if (remote[j] == null) {
                remote[j] = new RmrTriplet((int) m.v0(), m.v1(), m.v2());
            }
        }
        if (last) {
            return;
        }
        for (int o = 0; o < ops.size(); o++) {
            operation(k, o);
        }
    }

    private void operation(int k, int o) {
        Op op = ops.get(o);
        int n = conns.size();
        String what = op + " (iteration " + k + ")";
        if (initiates(op)) {
            for (int j = 0; j < n; j++) {
                Conn c = conns.get(j);
                var iov = c.segments(offsets[o], op.size(), op.segments());
                RmrTriplet target = new RmrTriplet(remote[j].rmrContext(), remote[j].targetAddress() + offsets[o],
                        op.size());
                switch (op.kind()) {
                    case SR -> c.ep.postSend(iov, cookie(k, 1 + 2 * o, j), Dat.COMPLETION_DEFAULT);
                    case RW -> c.ep.postRdmaWrite(iov, cookie(k, 1 + 2 * o, j), target, Dat.COMPLETION_DEFAULT);
                    case RR -> c.ep.postRdmaRead(iov, cookie(k, 1 + 2 * o, j), target, Dat.COMPLETION_DEFAULT);
                }
            }
            DtoOperation operation = switch (op.kind()) {
                case SR -> DtoOperation.SEND;
                case RW -> DtoOperation.RDMA_WRITE;
                case RR -> DtoOperation.RDMA_READ;
            };
            for (int j = 0; j < n; j++) {
                DatEvent.DtoCompletion c = group.requests.take(cookie(k, 1 + 2 * o, j), operation, what);
                if (op.kind() == Op.Kind.RR && c.transferredLength() != op.size()) {
                    throw ToolException.failure(what + ": read " + c.transferredLength() + " bytes");
                }
            }
            if (op.kind() != Op.Kind.SR) {
                for (int j = 0; j < n; j++) {
                    conns.get(j).send(SEND_SYNC, new Wire.Message(Wire.MSG_SYNC, o, k, 0, 0), cookie(k, 2 + 2 * o, j));
                }
                for (int j = 0; j < n; j++) {
                    group.requests.take(cookie(k, 2 + 2 * o, j), DtoOperation.SEND, what + " SYNC");
                }
            }
        } else {
            for (int j = 0; j < n; j++) {
                if (op.kind() == Op.Kind.SR) {
                    DatEvent.DtoCompletion c = group.receives.take(cookie(k, 1 + 2 * o, j), DtoOperation.RECEIVE,
                            what + " receive");
                    if (c.transferredLength() != op.size()) {
                        throw ToolException.failure(what + ": received " + c.transferredLength() + " bytes");
                    }
                } else {
                    group.receives.take(cookie(k, 2 + 2 * o, j), DtoOperation.RECEIVE, what + " SYNC");
                }
            }
        }
        if (options.validate() && !isSource(op)) {
            for (int j = 0; j < n; j++) {
                long bad = Patterns.mismatch(conns.get(j).data(offsets[o], op.size()), seed(k, o, j));
                if (bad >= 0) {
                    throw ToolException.failure(what + ": wrong data at offset " + bad + " on endpoint " + j
                            + " of thread " + thread);
                }
            }
        }
        if (counts != null) {
            counts[o].addAndGet(n);
            done.addAndGet(n);
        }
    }
}
