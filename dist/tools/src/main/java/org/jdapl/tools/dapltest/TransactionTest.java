package org.jdapl.tools.dapltest;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.Events;
import org.jdapl.tools.Patterns;
import org.jdapl.tools.ToolException;

/**
 * dapltest {@code -T T}: every thread connects its endpoint pairs and runs the operation list on
 * all of them, iteration after iteration. Each operation is posted on every pair of the thread
 * before the thread waits for the completions; an RDMA Write is followed by a sync message so
 * that its target checks the data only once it has landed (sends are ordered after writes on an
 * EP). With validation, sources get a fresh pattern per pair, iteration and operation, and
 * destinations are overwritten first, so that data that did not move is found.
 */
final class TransactionTest {
    private final Sides sides;
    private final DapltestOptions options;
    /** Operations done, for the progress line. */
    final AtomicLong done = new AtomicLong();
    /** Per operation of the list: how many ran. */
    final AtomicLong[] counts;

    TransactionTest(Sides sides, DapltestOptions options) {
        this.sides = sides;
        this.options = options;
        this.counts = new AtomicLong[options.ops().size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new AtomicLong();
        }
    }

    /** The operations a full run does. */
    long total() {
        return (long) options.threads() * options.endpoints() * options.iterations() * options.ops().size();
    }

    /**
     * Runs every thread to the end; the first failure closes both IAs so that the other threads end too.
     *
     * @return the elapsed nanoseconds
     * @throws ToolException FAILURE with the first failure
     */
    long run() {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < options.threads(); t++) {
            int index = t;
            threads.add(Thread.ofPlatform().name("dapltest-" + t).start(() -> {
                try (Arena arena = Arena.ofShared()) {
                    runThread(index, arena);
                } catch (Throwable e) {
                    if (failure.compareAndSet(null, e)) {
                        sides.close();
                    }
                }
            }));
        }
        long limitMillis = Math.max(60_000, options.timeoutMicros() / 1_000 * 4);
        for (Thread thread : threads) {
            try {
                thread.join(limitMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                sides.close();
                throw ToolException.failure("interrupted");
            }
            if (thread.isAlive()) {
                sides.close();
                throw ToolException.failure(thread.getName() + " did not finish within its wait limits");
            }
        }
        long elapsed = System.nanoTime() - start;
        Throwable first = failure.get();
        if (first instanceof ToolException e) {
            throw e;
        }
        if (first != null) {
            throw new ToolException(ToolException.FAILURE, first.toString(), first);
        }
        return elapsed;
    }

    private void runThread(int thread, Arena arena) {
        PairGroup group = new PairGroup(sides, arena, options, options.endpoints(), 4, 1);
        for (int iteration = 0; iteration < options.iterations(); iteration++) {
            for (int o = 0; o < options.ops().size(); o++) {
                long seed = ((long) thread << 48) ^ ((long) iteration << 16) ^ o;
                runOp(group, options.ops().get(o), seed);
                counts[o].addAndGet(group.pairs.size());
                done.addAndGet(group.pairs.size());
            }
        }
        group.close();
    }

    private void runOp(PairGroup group, Op op, long seed) {
        int n = group.pairs.size();
        PairGroup.End[] initiator = new PairGroup.End[n];
        PairGroup.End[] target = new PairGroup.End[n];
        for (int j = 0; j < n; j++) {
            PairGroup.Pair pair = group.pairs.get(j);
            initiator[j] = op.clientInitiates() ? pair.client() : pair.server();
            target[j] = op.clientInitiates() ? pair.server() : pair.client();
        }
        if (options.validate()) {
            for (int j = 0; j < n; j++) {
                PairGroup.End source = op.kind() == Op.Kind.RR ? target[j] : initiator[j];
                PairGroup.End sink = op.kind() == Op.Kind.RR ? initiator[j] : target[j];
                Patterns.fill(source.data(op.size()), seed + j);
                Patterns.fill(sink.data(op.size()), ~(seed + j));
            }
        }
        for (int j = 0; j < n; j++) {
            List<LmrTriplet> iov = initiator[j].segments(op.size(), op.segments());
            RmrTriplet remote = new RmrTriplet(target[j].rmrContext, target[j].address, op.size());
            switch (op.kind()) {
                case SR -> {
                    target[j].ep.postRecv(target[j].segments(op.size(), op.segments()), j, Dat.COMPLETION_DEFAULT);
                    initiator[j].ep.postSend(iov, j, Dat.COMPLETION_DEFAULT);
                }
                case RW -> {
                    target[j].ep.postRecv(List.of(target[j].syncRecv()), j, Dat.COMPLETION_DEFAULT);
                    initiator[j].ep.postRdmaWrite(iov, j, remote, Dat.COMPLETION_DEFAULT);
                }
                case RR -> initiator[j].ep.postRdmaRead(iov, j, remote, Dat.COMPLETION_DEFAULT);
            }
        }
        DtoOperation operation = switch (op.kind()) {
            case SR -> DtoOperation.SEND;
            case RW -> DtoOperation.RDMA_WRITE;
            case RR -> DtoOperation.RDMA_READ;
        };
        EventDispatcher initiatorEvd = initiator[0].requestEvd;
        EventDispatcher targetEvd = target[0].recvEvd;
        collect(initiatorEvd, n, operation, op.size(), op + ": " + operation);
        if (op.kind() == Op.Kind.RW) {
            for (int j = 0; j < n; j++) {
                initiator[j].ep.postSend(List.of(initiator[j].syncSend()), j, Dat.COMPLETION_DEFAULT);
            }
            collect(initiatorEvd, n, DtoOperation.SEND, PairGroup.SYNC_LEN, op + ": sync send");
        }
        if (op.kind() != Op.Kind.RR) {
            collect(targetEvd, n, DtoOperation.RECEIVE,
                    op.kind() == Op.Kind.SR ? op.size() : PairGroup.SYNC_LEN, op + ": receive");
        }
        if (options.validate()) {
            for (int j = 0; j < n; j++) {
                PairGroup.End sink = op.kind() == Op.Kind.RR ? initiator[j] : target[j];
                long bad = Patterns.mismatch(sink.data(op.size()), seed + j);
                if (bad >= 0) {
                    throw ToolException.failure(op + ": wrong data at offset " + bad + " on endpoint pair " + j);
                }
            }
        }
    }

    /** Waits for one successful completion per pair (cookie = pair index) that moved {@code length} bytes. */
    private void collect(EventDispatcher evd, int n, DtoOperation operation, long length, String what) {
        BitSet seen = new BitSet(n);
        for (int i = 0; i < n; i++) {
            DatEvent.DtoCompletion c = Events.dto(evd, options.timeoutMicros(), operation, what);
            int cookie = (int) c.cookie();
            if (cookie < 0 || cookie >= n || seen.get(cookie)) {
                throw ToolException.failure(what + ": unexpected or repeated completion, cookie " + c.cookie());
            }
            seen.set(cookie);
            // Like ibv_wc.byte_len, the length is defined for receives and RDMA Reads only.
            boolean defined = operation == DtoOperation.RECEIVE || operation == DtoOperation.RDMA_READ;
            if (defined && c.transferredLength() != length) {
                throw ToolException.failure(what + ": moved " + c.transferredLength() + " bytes, expected " + length);
            }
        }
    }
}
