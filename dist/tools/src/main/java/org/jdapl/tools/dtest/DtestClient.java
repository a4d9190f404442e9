package org.jdapl.tools.dtest;

import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.tools.Events;
import org.jdapl.tools.Patterns;
import org.jdapl.tools.ToolException;

/**
 * The active side of dtest: connects once to be rejected and once for real (with private data),
 * learns the server's RDMA buffer, runs one untimed round of each measurement (so that the timed
 * ones show steady state: compiled code, warm caches), measures RDMA Write, RDMA Read and a
 * send/recv ping-pong, and disconnects.
 */
final class DtestClient extends DtestSide {
    /** Operations done so far, for the progress line. */
    final AtomicLong progress = new AtomicLong();
    private int remoteContext;
    private long remoteAddress;

    DtestClient(DatRegistry registry, DtestOptions options) {
        super(registry, options, "client");
    }

    /** The operations a full run does, for the progress line. */
    long totalOperations() {
        return options.connectOnly() ? 0 : 5L * options.burst() + Math.max(options.burst(), WARM_UP_PINGS);
    }

    /** Creates the IA and its objects (before the server's address is known, so that they are measured alone). */
    void setUp() {
        openIa();
        createPz();
        createEvds(options.bufLen(), options.burst(), false);
        createLmrs(options.bufLen(), options.msgLen());
        createEp(options.bufLen());
    }

    /**
     * Runs the test against the server at {@code server}.
     *
     * @throws ToolException FAILURE if anything goes wrong
     */
    void run(SocketAddress server) {
        rejectProbe(server);
        postReceives();
        long start = System.nanoTime();
        connect(server, Wire.connectData(Wire.KIND_CONNECT, options), "connection to " + server);
        DatEvent.Connection established = Events.connection(connectEvd, options.timeoutMicros(),
                "client: connection established", EventNumber.CONNECTION_ESTABLISHED, EventNumber.CONNECTION_PEER_REJECTED,
                EventNumber.CONNECTION_NON_PEER_REJECTED, EventNumber.CONNECTION_UNREACHABLE,
                EventNumber.CONNECTION_TIMED_OUT);
        if (established.number() != EventNumber.CONNECTION_ESTABLISHED) {
            throw ToolException.failure("client: connection to " + server + " failed: " + established.number().datName());
        }
        timings.add("connect", 1, System.nanoTime() - start);
        if (!Wire.isAccept(established.privateData())) {
            throw ToolException.failure("client: the server accepted with private data that is not dtest's ("
                    + established.privateData().length + " bytes)");
        }
        if (!options.connectOnly()) {
            exchangeInfo();
            warmUp();
            rdmaWrite();
            rdmaRead();
            pingPong();
            send(Wire.MSG_BYE, 0, 0, 0, CONTROL_LEN);
        }
        long disconnectStart = System.nanoTime();
        ep.disconnect(CloseFlag.GRACEFUL);
        while (true) {
            DatEvent event = Events.next(connectEvd, options.timeoutMicros(), "client: disconnect");
            if (event instanceof DatEvent.Connection c && c.number() == EventNumber.CONNECTION_DISCONNECTED) {
                break;
            }
            throw ToolException.failure("client: waiting for DISCONNECTED, got " + Events.describe(event));
        }
        timings.add("disconnect", 1, System.nanoTime() - disconnectStart);
        teardown();
    }

    private void connect(SocketAddress server, byte[] privateData, String what) {
        try {
            ep.connect(server, options.connQual(), options.timeoutMicros(), privateData);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "client: " + what + ": " + e.getMessage(), e);
        }
    }

    /** The first connect: the server must reject it with its reject private data. */
    private void rejectProbe(SocketAddress server) {
        long start = System.nanoTime();
        connect(server, Wire.connectData(Wire.KIND_REJECT_PROBE, options), "reject probe to " + server);
        DatEvent.Connection outcome = Events.connection(connectEvd, options.timeoutMicros(),
                "client: the reject of the probe", EventNumber.CONNECTION_PEER_REJECTED,
                EventNumber.CONNECTION_ESTABLISHED, EventNumber.CONNECTION_NON_PEER_REJECTED,
                EventNumber.CONNECTION_UNREACHABLE, EventNumber.CONNECTION_TIMED_OUT);
        if (outcome.number() != EventNumber.CONNECTION_PEER_REJECTED) {
            throw ToolException.failure("client: the reject probe to " + server + " ended with "
                    + outcome.number().datName() + ", expected DAT_CONNECTION_EVENT_PEER_REJECTED");
        }
        if (!Wire.isReject(outcome.privateData())) {
            throw ToolException.failure("client: the server rejected the probe with private data that is not dtest's");
        }
        timings.add("reject probe", 1, System.nanoTime() - start);
        // A peer-rejected EP is DISCONNECTED; dat_ep_reset makes it usable for the next connect.
        if (ep.status().state() == EpState.DISCONNECTED) {
            ep.reset();
        }
    }

    private void exchangeInfo() {
        send(Wire.MSG_INFO, 0, 0, 0, CONTROL_LEN);
        Wire.Message info = receive(Wire.MSG_INFO);
        remoteContext = (int) info.value();
        remoteAddress = info.value2();
        if (info.value3() < options.bufLen()) {
            throw ToolException.failure("client: the server's buffer has " + info.value3() + " bytes, fewer than "
                    + options.bufLen());
        }
    }

    private void rdmaWrite() {
        long seed = 0x5EED;
        if (options.validate()) {
            Patterns.fill(rdmaLmr.segment(), seed);
        }
        long nanos = burst(DtoOperation.RDMA_WRITE);
        timings.add("RDMA write", options.burst(), nanos);
        send(Wire.MSG_WRITE_DONE, seed, 0, 0, CONTROL_LEN);
        Wire.Message verdict = receive(Wire.MSG_WRITE_CHECKED);
        if (options.validate() && verdict.value() != 0) {
            throw ToolException.failure("RDMA write: the server found wrong data at offset " + (verdict.value() - 1));
        }
        if (options.validate()) {
            long readSeed = verdict.value2();
            Patterns.fill(rdmaLmr.segment(), ~readSeed);
            rdmaReadSeed = readSeed;
        }
    }

    private long rdmaReadSeed;

    private void rdmaRead() {
        long nanos = burst(DtoOperation.RDMA_READ);
        timings.add("RDMA read", options.burst(), nanos);
        if (options.validate()) {
            long bad = Patterns.mismatch(rdmaLmr.segment(), rdmaReadSeed);
            if (bad >= 0) {
                throw ToolException.failure("RDMA read: wrong data at offset " + bad);
            }
        }
    }

    /** Posts {@code burst} RDMA operations, at most {@code window} outstanding, and waits for all. */
    private long burst(DtoOperation operation) {
        int limit = operation == DtoOperation.RDMA_READ
                ? Math.max(1, Math.min(window, ep.query().attributes().maxRdmaReadOut()))
                : window;
        List<LmrTriplet> local = List.of(new LmrTriplet(rdmaLmr, 0, options.bufLen()));
        RmrTriplet remote = new RmrTriplet(remoteContext, remoteAddress, options.bufLen());
        long posted = 0;
        long done = 0;
        long start = System.nanoTime();
        while (done < options.burst()) {
            while (posted < options.burst() && posted - done < limit) {
                if (operation == DtoOperation.RDMA_WRITE) {
                    ep.postRdmaWrite(local, posted, remote, Dat.COMPLETION_DEFAULT);
                } else {
                    ep.postRdmaRead(local, posted, remote, Dat.COMPLETION_DEFAULT);
                }
                posted++;
            }
            DatEvent.DtoCompletion completion = Events.dto(requestEvd, options.timeoutMicros(), operation,
                    "client: " + operation + " " + (done + 1) + " of " + options.burst());
            if (completion.cookie() != done) {
                throw ToolException.failure("client: " + operation + " completions out of order: cookie "
                        + completion.cookie() + ", expected " + done);
            }
            // Like ibv_wc.byte_len, the length is defined for receives and RDMA Reads only.
            if (operation == DtoOperation.RDMA_READ && completion.transferredLength() != options.bufLen()) {
                throw ToolException.failure("client: " + operation + " moved " + completion.transferredLength()
                        + " bytes, expected " + options.bufLen());
            }
            done++;
            progress.incrementAndGet();
        }
        return System.nanoTime() - start;
    }

    /**
     * One untimed round of each RDMA measurement, and at least {@link #WARM_UP_PINGS} untimed pings:
     * a round trip is short, so a burst of 100 leaves it to code the JIT has not compiled yet (in one
     * JVM on the loopback fabric: hundreds of microseconds instead of tens).
     */
    private void warmUp() {
        burst(DtoOperation.RDMA_WRITE);
        burst(DtoOperation.RDMA_READ);
        pings(Math.max(options.burst(), WARM_UP_PINGS));
    }

    /** The fewest untimed pings before the timed ones. */
    static final int WARM_UP_PINGS = 2_000;

    private void pingPong() {
        timings.add("message round trip", options.burst(), pings(options.burst()));
    }

    private long pings(int count) {
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            send(Wire.MSG_PING, i, 0, 0, options.msgLen());
            Wire.Message pong = receive(Wire.MSG_PONG);
            if (pong.value() != i) {
                throw ToolException.failure("client: pong " + pong.value() + " answers ping " + i);
            }
            progress.incrementAndGet();
        }
        return System.nanoTime() - start;
    }
}
