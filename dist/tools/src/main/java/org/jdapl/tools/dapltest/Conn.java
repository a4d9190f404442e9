package org.jdapl.tools.dapltest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Events;
import org.jdapl.tools.ToolException;

/**
 * One endpoint of dapltest with its registered memory: a data area (what the test moves), a send
 * slot per kind of message and a ring of receive slots for messages. The EVDs belong to the
 * {@link Group} that made it. It connects (client) or accepts (server), and frees what it created.
 */
final class Conn {
    /** The EVDs a group of endpoints shares: requests, receives and connection events. */
    static final class Group {
        final Side side;
        final EventDispatcher request;
        final EventDispatcher recv;
        final EventDispatcher connect;
        final Completions requests;
        final Completions receives;

        Group(Side side, int endpoints, int depth) {
            this.side = side;
            int qlen = Math.min(side.attributes().maxEvdQlen(), endpoints * depth + 8);
            request = side.ia().createEvd(qlen, null, EnumSet.of(EvdFlag.DTO));
            recv = side.ia().createEvd(qlen, null, EnumSet.of(EvdFlag.DTO));
            connect = side.ia().createEvd(Math.min(side.attributes().maxEvdQlen(), 2 * endpoints + 8), null,
                    EnumSet.of(EvdFlag.CONNECTION));
            requests = new Completions(request, side.timeoutMicros(), side.poll());
            receives = new Completions(recv, side.timeoutMicros(), side.poll());
        }

        void free() {
            for (EventDispatcher evd : List.of(request, recv, connect)) {
                evd.free();
            }
        }
    }

    /** The length of a test endpoint's message slots. */
    static final int SMALL_SLOT = 64;

    final Group group;
    final Endpoint ep;
    final LocalMemoryRegion lmr;
    final long dataSize;
    final int slot;
    final int sendSlots;
    final int recvSlots;
    final int rmrContext;
    final long address;
    private final Arena arena;

    /**
     * An endpoint with {@code dataSize} bytes of data area and message slots of {@code slot} bytes.
     *
     * @param depth the DTOs it may have outstanding in each direction
     */
    Conn(Group group, long dataSize, int slot, int sendSlots, int recvSlots, int depth, int segments, int reads) {
        this.group = group;
        this.dataSize = (dataSize + 63) & ~63L;
        this.slot = slot;
        this.sendSlots = sendSlots;
        this.recvSlots = recvSlots;
        Side side = group.side;
        arena = Arena.ofShared();
        try {
            MemorySegment memory = arena.allocate(this.dataSize + (long) (sendSlots + recvSlots) * slot, 4096);
            lmr = side.ia().createLmr(side.pz(), memory, Dat.MEM_PRIV_ALL, VaType.VA);
            int limitReads = Math.max(1, Math.min(reads, Math.min(side.attributes().maxRdmaReadPerEpIn(),
                    side.attributes().maxRdmaReadPerEpOut())));
            long message = Math.max(slot, Math.min(this.dataSize, side.attributes().maxMessageSize()));
            EpAttributes attributes = new EpAttributes(message, Math.max(1, Math.min(this.dataSize,
                    side.attributes().maxRdmaSize())), side.qos(), Set.of(), Set.of(), depth, depth,
                    segments, segments, limitReads, limitReads, Dat.WATERMARK_INFINITE);
            ep = side.ia().createEp(side.pz(), group.recv, group.request, group.connect, attributes);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        var param = lmr.query();
        rmrContext = param.rmrContext();
        address = param.registeredAddress();
    }

    MemorySegment data(long offset, long size) {
        return lmr.segment().asSlice(offset, size);
    }

    /** The scatter/gather list of {@code size} bytes at {@code offset} of the data area in {@code count} entries. */
    List<LmrTriplet> segments(long offset, int size, int count) {
        List<LmrTriplet> iov = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            long from = Op.segmentOffset(size, count, k);
            long to = Op.segmentOffset(size, count, k + 1);
            iov.add(new LmrTriplet(lmr, offset + from, to - from));
        }
        return iov;
    }

    MemorySegment sendSlot(int i) {
        return lmr.segment().asSlice(dataSize + (long) i * slot, slot);
    }

    MemorySegment recvSlot(int i) {
        return lmr.segment().asSlice(dataSize + (long) (sendSlots + i) * slot, slot);
    }

    /** Sends {@code m} from send slot {@code i}. */
    void send(int i, Wire.Message m, long cookie) {
        int length = Wire.write(sendSlot(i), m);
        ep.postSend(List.of(new LmrTriplet(lmr, dataSize + (long) i * slot, length)), cookie, Dat.COMPLETION_DEFAULT);
    }

    /** Posts a receive of a message into receive slot {@code i}. */
    void postRecv(int i, long cookie) {
        ep.postRecv(List.of(new LmrTriplet(lmr, dataSize + (long) (sendSlots + i) * slot, slot)), cookie,
                Dat.COMPLETION_DEFAULT);
    }

    /** The message that arrived in receive slot {@code i} with the given completion. */
    Wire.Message message(int i, DatEvent.DtoCompletion c) {
        return Wire.read(recvSlot(i), c.transferredLength());
    }

    /**
     * Connects to a server and waits for the connection.
     *
     * @throws ToolException FAILURE with the connection event if the connection is not established
     */
    void connect(SocketAddress server, long connQual, byte[] privateData, String what) {
        String target = server + " (conn_qual 0x" + Long.toHexString(connQual) + ")";
        try {
            ep.connect(server, connQual, group.side.timeoutMicros(), privateData, group.side.qos(), ConnectFlag.DEFAULT);
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, what + ": no connection to " + target + ": "
                    + e.getMessage(), e);
        }
        DatEvent event = Events.next(group.connect, group.side.timeoutMicros(), what + ": the connection to " + target);
        if (!(event instanceof DatEvent.Connection c) || c.number() != EventNumber.CONNECTION_ESTABLISHED) {
            throw ToolException.failure(what + ": no connection to " + target + ": " + Events.describe(event));
        }
    }

    /** Accepts {@code request} on this endpoint and waits for the connection. */
    void accept(ConnectionRequest request, String what) {
        request.accept(ep, new byte[0]);
        Events.connection(group.connect, group.side.timeoutMicros(), what, EventNumber.CONNECTION_ESTABLISHED);
    }

    /** Disconnects (gracefully) and waits for DISCONNECTED. */
    void disconnect(String what) {
        ep.disconnect(CloseFlag.GRACEFUL);
        awaitDisconnect(what);
    }

    /** Waits for the peer's disconnect. */
    void awaitDisconnect(String what) {
        Events.connection(group.connect, group.side.timeoutMicros(), what + " DISCONNECTED",
                EventNumber.CONNECTION_DISCONNECTED);
    }

    /** Frees the EP and the LMR and releases the memory. */
    void free() {
        try {
            if (!ep.isFreed()) {
                ep.free();
            }
            if (!lmr.isFreed()) {
                lmr.free();
            }
        } finally {
            arena.close();
        }
    }
}
