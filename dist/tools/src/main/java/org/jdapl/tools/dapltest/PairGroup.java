package org.jdapl.tools.dapltest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Events;
import org.jdapl.tools.ToolException;

/**
 * The connected endpoint pairs one dapltest thread drives: per side a request EVD, a receive EVD
 * and a connect EVD shared by the thread's pairs, a PSP on the server side, and per pair an EP and
 * an LMR on each side. An LMR holds the data area followed by a send slot and a receive slot for
 * the small sync messages that tell a target an RDMA Write has landed.
 */
final class PairGroup {
    /** The sync message length. */
    static final int SYNC_LEN = 8;
    private static final int SLOT = 16;

    /** One side of one pair, as the operations see it. */
    static final class End {
        final Endpoint ep;
        final LocalMemoryRegion lmr;
        final EventDispatcher requestEvd;
        final EventDispatcher recvEvd;
        final long dataSize;
        final int rmrContext;
        final long address;

        End(Endpoint ep, LocalMemoryRegion lmr, EventDispatcher requestEvd, EventDispatcher recvEvd, long dataSize) {
            this.ep = ep;
            this.lmr = lmr;
            this.requestEvd = requestEvd;
            this.recvEvd = recvEvd;
            this.dataSize = dataSize;
            var param = lmr.query();
            this.rmrContext = param.rmrContext();
            this.address = param.registeredAddress();
        }

        MemorySegment data(long size) {
            return lmr.segment().asSlice(0, size);
        }

        LmrTriplet syncSend() {
            return new LmrTriplet(lmr, dataSize, SYNC_LEN);
        }

        LmrTriplet syncRecv() {
            return new LmrTriplet(lmr, dataSize + SLOT, SLOT);
        }

        List<LmrTriplet> segments(int size, int count) {
            List<LmrTriplet> iov = new ArrayList<>(count);
            for (int k = 0; k < count; k++) {
                long from = Op.segmentOffset(size, count, k);
                long to = Op.segmentOffset(size, count, k + 1);
                iov.add(new LmrTriplet(lmr, from, to - from));
            }
            return iov;
        }
    }

    /** A connected pair. */
    record Pair(End client, End server) {
    }

    final List<Pair> pairs = new ArrayList<>();
    private final Sides sides;
    private final long timeoutMicros;
    private final List<EventDispatcher> evds = new ArrayList<>();
    private final EventDispatcher clientConnect;
    private final EventDispatcher serverConnect;
    private final EventDispatcher serverCr;
    private final EventDispatcher clientRequest;
    private final EventDispatcher clientRecv;
    private final EventDispatcher serverRequest;
    private final EventDispatcher serverRecv;
    private final PublicServicePoint psp;

    /**
     * Creates the EVDs and the PSP and connects {@code count} pairs.
     *
     * @param depth the DTOs one EP may have outstanding in each direction
     * @param readDepth the RDMA Reads one EP may have in flight
     * @throws ToolException FAILURE if a connection cannot be made
     */
    PairGroup(Sides sides, Arena arena, DapltestOptions options, int count, int depth, int readDepth) {
        this.sides = sides;
        this.timeoutMicros = options.timeoutMicros();
        int qlen = count * (depth + 2) + 4;
        clientRequest = evd(sides.clientIa, EvdFlag.DTO, qlen);
        clientRecv = evd(sides.clientIa, EvdFlag.DTO, qlen);
        clientConnect = evd(sides.clientIa, EvdFlag.CONNECTION, 2 * count + 4);
        serverRequest = evd(sides.serverIa, EvdFlag.DTO, qlen);
        serverRecv = evd(sides.serverIa, EvdFlag.DTO, qlen);
        serverConnect = evd(sides.serverIa, EvdFlag.CONNECTION, 2 * count + 4);
        serverCr = evd(sides.serverIa, EvdFlag.CR, count + 4);
        psp = sides.serverIa.createPspAny(serverCr, PspFlag.CONSUMER);
        long connQual = psp.query().connQual();

        long dataSize = options.maxSize();
        int maxSr = options.ops().stream().filter(o -> o.kind() == Op.Kind.SR).mapToInt(Op::size).max().orElse(0);
        int maxRdma = options.ops().stream().filter(o -> o.kind() != Op.Kind.SR).mapToInt(Op::size).max().orElse(0);
        int reads = Math.max(1, Math.min(readDepth, Math.min(sides.attributes.maxRdmaReadPerEpIn(),
                sides.attributes.maxRdmaReadPerEpOut())));
        EpAttributes attributes = new EpAttributes(Math.max(maxSr, SLOT), maxRdma, Qos.BEST_EFFORT, Set.of(), Set.of(),
                depth, depth, options.maxSegments(), options.maxSegments(), reads, reads, Dat.WATERMARK_INFINITE);
        for (int i = 0; i < count; i++) {
            End client = end(sides.clientIa, sides.clientPz, arena, dataSize, clientRecv, clientRequest,
                    clientConnect, attributes);
            End server = end(sides.serverIa, sides.serverPz, arena, dataSize, serverRecv, serverRequest,
                    serverConnect, attributes);
            pairs.add(new Pair(client, server));
            connect(client, server, connQual, i);
        }
    }

    private EventDispatcher evd(InterfaceAdapter ia, EvdFlag flag, int qlen) {
        EventDispatcher evd = ia.createEvd(Math.min(qlen, sides.attributes.maxEvdQlen()), null, EnumSet.of(flag));
        evds.add(evd);
        return evd;
    }

    private static End end(InterfaceAdapter ia, ProtectionZone pz, Arena arena, long dataSize, EventDispatcher recv,
                           EventDispatcher request, EventDispatcher connect, EpAttributes attributes) {
        MemorySegment memory = arena.allocate(dataSize + 2 * SLOT, 4096);
        LocalMemoryRegion lmr = ia.createLmr(pz, memory, Dat.MEM_PRIV_ALL, VaType.VA);
        Endpoint ep = ia.createEp(pz, recv, request, connect, attributes);
        return new End(ep, lmr, request, recv, dataSize);
    }

    private void connect(End client, End server, long connQual, int index) {
        String what = "connection of endpoint pair " + index;
        try {
            client.ep.connect(sides.serverIa.query().attributes().address(), connQual, timeoutMicros, new byte[0]);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, what + ": " + e.getMessage(), e);
        }
        DatEvent event = Events.next(serverCr, timeoutMicros, "the connection request of endpoint pair " + index);
        if (!(event instanceof DatEvent.ConnectionRequest request)) {
            throw ToolException.failure(what + ": expected a connection request, got " + Events.describe(event));
        }
        request.request().accept(server.ep, new byte[0]);
        Events.connection(serverConnect, timeoutMicros, what + " (server side)", EventNumber.CONNECTION_ESTABLISHED);
        Events.connection(clientConnect, timeoutMicros, what + " (client side)", EventNumber.CONNECTION_ESTABLISHED);
    }

    /**
     * Disconnects every pair gracefully, waits for both sides' DISCONNECTED and frees every object.
     *
     * @throws ToolException FAILURE if a disconnect or free fails
     */
    void close() {
        for (Pair pair : pairs) {
            pair.client.ep.disconnect(CloseFlag.GRACEFUL);
        }
        for (int i = 0; i < pairs.size(); i++) {
            Events.connection(clientConnect, timeoutMicros, "client side DISCONNECTED", EventNumber.CONNECTION_DISCONNECTED);
            Events.connection(serverConnect, timeoutMicros, "server side DISCONNECTED", EventNumber.CONNECTION_DISCONNECTED);
        }
        try {
            for (Pair pair : pairs) {
                for (End end : List.of(pair.client, pair.server)) {
                    end.ep.free();
                    end.lmr.free();
                }
            }
            psp.free();
            for (EventDispatcher evd : evds) {
                evd.free();
            }
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "freeing the endpoint pairs failed: " + e.getMessage(), e);
        }
    }
}
