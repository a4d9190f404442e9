package org.jdapl.tools.dapltest;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.Events;
import org.jdapl.tools.ToolException;

/**
 * dapltest {@code -T P}: one endpoint pair, one operation repeated, at most {@code pipeline} in
 * flight; measures the operations per second and the bandwidth. For SR the receive is posted on
 * the target just before each send, so that a send never finds no receive.
 */
final class PerformanceTest {
    private final Sides sides;
    private final DapltestOptions options;
    /** Operations done, for the progress line. */
    final AtomicLong done = new AtomicLong();

    PerformanceTest(Sides sides, DapltestOptions options) {
        this.sides = sides;
        this.options = options;
    }

    /**
     * Runs the test.
     *
     * @return the nanoseconds the operations took (connection setup not included)
     * @throws ToolException FAILURE if an operation fails
     */
    long run() {
        Op op = options.ops().getFirst();
        int pipeline = options.pipeline();
        try (Arena arena = Arena.ofShared()) {
            PairGroup group = new PairGroup(sides, arena, options, 1, pipeline + 1, pipeline);
            PairGroup.End initiator = op.clientInitiates() ? group.pairs.getFirst().client() : group.pairs.getFirst().server();
            PairGroup.End target = op.clientInitiates() ? group.pairs.getFirst().server() : group.pairs.getFirst().client();
            List<LmrTriplet> iov = initiator.segments(op.size(), op.segments());
            List<LmrTriplet> recvIov = target.segments(op.size(), op.segments());
            RmrTriplet remote = new RmrTriplet(target.rmrContext, target.address, op.size());
            DtoOperation operation = switch (op.kind()) {
                case SR -> DtoOperation.SEND;
                case RW -> DtoOperation.RDMA_WRITE;
                case RR -> DtoOperation.RDMA_READ;
            };
            int limit = op.kind() == Op.Kind.RR
                    ? Math.max(1, Math.min(pipeline, initiator.ep.query().attributes().maxRdmaReadOut()))
                    : pipeline;
            long total = options.iterations();
            long posted = 0;
            long completed = 0;
            long start = System.nanoTime();
            while (completed < total) {
                while (posted < total && posted - completed < limit) {
                    switch (op.kind()) {
                        case SR -> {
                            target.ep.postRecv(recvIov, posted, Dat.COMPLETION_DEFAULT);
                            initiator.ep.postSend(iov, posted, Dat.COMPLETION_DEFAULT);
                        }
                        case RW -> initiator.ep.postRdmaWrite(iov, posted, remote, Dat.COMPLETION_DEFAULT);
                        case RR -> initiator.ep.postRdmaRead(iov, posted, remote, Dat.COMPLETION_DEFAULT);
                    }
                    posted++;
                }
                var c = Events.dto(initiator.requestEvd, options.timeoutMicros(), operation, op + " " + (completed + 1));
                if (c.cookie() != completed) {
                    throw ToolException.failure(op + ": completion " + c.cookie() + " out of order, expected " + completed);
                }
                if (op.kind() == Op.Kind.SR) {
                    var r = Events.dto(target.recvEvd, options.timeoutMicros(), DtoOperation.RECEIVE,
                            op + " receive " + (completed + 1));
                    if (r.transferredLength() != op.size()) {
                        throw ToolException.failure(op + ": received " + r.transferredLength() + " bytes");
                    }
                }
                completed++;
                done.incrementAndGet();
            }
            long elapsed = System.nanoTime() - start;
            group.close();
            return elapsed;
        }
    }
}
