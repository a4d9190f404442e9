package org.jdapl.tools.dtest;

import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.function.BiConsumer;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.tools.Events;
import org.jdapl.tools.Patterns;
import org.jdapl.tools.ToolException;

/**
 * The passive side of dtest: listens on a PSP, rejects the client's reject probe, accepts its
 * connection with private data, hands out its RDMA buffer, checks what the client wrote, answers
 * pings, and ends when the client disconnects.
 */
final class DtestServer extends DtestSide {
    private EventDispatcher crEvd;
    private PublicServicePoint psp;
    private Wire.ConnectRequest client;

    DtestServer(DatRegistry registry, DtestOptions options) {
        super(registry, options, "server");
    }

    /**
     * Serves one client.
     *
     * @param listening told the IA address and connection qualifier once the PSP listens
     * @param requestWaitMicros how long to wait for the client's first connection request
     * @throws ToolException FAILURE if anything goes wrong
     */
    void serve(BiConsumer<SocketAddress, Long> listening, long requestWaitMicros) {
        openIa();
        createPz();
        crEvd = createEvd(EnumSet.of(EvdFlag.CR), 8);
        psp = IaSteps.listen(ia, options, crEvd, timings);
        listening.accept(iaAttributes.address(), options.connQual());

        ConnectionRequest request = awaitRequest(requestWaitMicros);
        Wire.ConnectRequest params = Wire.parseConnect(request.query().privateData());
        if (params.kind() == Wire.KIND_REJECT_PROBE) {
            request.reject(Wire.rejectData());
            request = awaitRequest(options.timeoutMicros());
            params = Wire.parseConnect(request.query().privateData());
        }
        if (params.kind() != Wire.KIND_CONNECT) {
            request.reject(Wire.rejectData());
            throw ToolException.failure("server: a second reject probe instead of the connection");
        }
        client = params;
        createEvds(params.bufLen(), params.burst(), true);
        createLmrs(params.bufLen(), params.msgLen());
        createEp(params.bufLen());
        postReceives();

        long acceptStart = System.nanoTime();
        request.accept(ep, Wire.acceptData());
        Events.connection(connectEvd, options.timeoutMicros(), "server: connection established",
                EventNumber.CONNECTION_ESTABLISHED);
        timings.add("connect", 1, System.nanoTime() - acceptStart);

        if (!params.connectOnly()) {
            exchange();
        }
        awaitDisconnect();
        teardown();
    }

    private ConnectionRequest awaitRequest(long timeoutMicros) {
        DatEvent event = Events.next(crEvd, timeoutMicros, "server: a connection request on conn_qual "
                + options.connQual());
        if (event instanceof DatEvent.ConnectionRequest cr) {
            return cr.request();
        }
        throw ToolException.failure("server: waiting for a connection request, got " + Events.describe(event));
    }

    /** Answers the client's messages until BYE. */
    private void exchange() {
        Patterns.fill(rdmaLmr.segment(), 0);
        long seedToRead = 0;
        while (true) {
            Wire.Message message = receive(0);
            switch (message.type()) {
                case Wire.MSG_INFO -> send(Wire.MSG_INFO, rdmaLmr.rmrContext() & 0xFFFF_FFFFL,
                        rdmaLmr.query().registeredAddress(), client.bufLen(), CONTROL_LEN);
                case Wire.MSG_WRITE_DONE -> {
                    long verdict = 0;
                    if (client.validate()) {
                        long bad = Patterns.mismatch(rdmaLmr.segment(), message.value());
                        verdict = bad < 0 ? 0 : bad + 1;
                        seedToRead = message.value() + 1;
                        Patterns.fill(rdmaLmr.segment(), seedToRead);
                    }
                    send(Wire.MSG_WRITE_CHECKED, verdict, seedToRead, 0, CONTROL_LEN);
                }
                case Wire.MSG_PING -> send(Wire.MSG_PONG, message.value(), 0, 0, client.msgLen());
                case Wire.MSG_BYE -> {
                    return;
                }
                default -> throw ToolException.failure("server: unexpected message " + Wire.typeName(message.type()));
            }
        }
    }

    /** Waits for DISCONNECTED; receives flushed by the disconnect are taken on the way. */
    private void awaitDisconnect() {
        long deadline = System.nanoTime() + options.timeoutMicros() * 1_000;
        while (true) {
            long left = Math.max(1, (deadline - System.nanoTime()) / 1_000);
            DatEvent event = Events.next(connectEvd, left, "server: the client's disconnect");
            if (event instanceof DatEvent.Connection c && c.number() == EventNumber.CONNECTION_DISCONNECTED) {
                return;
            }
            if (!(event instanceof DatEvent.DtoCompletion)) {
                throw ToolException.failure("server: waiting for the client's disconnect, got " + Events.describe(event));
            }
        }
    }

    @Override
    void freeExtra() {
        psp.free();
        crEvd.free();
    }

    /** The client's parameters, once connected. */
    Wire.ConnectRequest client() {
        return client;
    }
}
