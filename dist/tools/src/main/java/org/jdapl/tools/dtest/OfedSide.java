package org.jdapl.tools.dtest;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.IaAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Events;
import org.jdapl.tools.Timings;
import org.jdapl.tools.ToolException;

/**
 * One side of OFED dtest's flow ({@link OfedWire}), either side, symmetric as OFED's: after the
 * connection each side sends its receive buffer's {@code DAT_RMR_TRIPLET} and takes the peer's;
 * both do {@code burst} RDMA Writes of the buffer into the peer's (one completion in {@code -S}),
 * the client then sends a triplet and the server answers; both do four RDMA Reads of the peer's
 * buffer and exchange a triplet; then a 100-message ping-pong of buffer-length sends; the client
 * disconnects and both see DISCONNECTED.
 */
final class OfedSide implements AutoCloseable {
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);

    private final DatRegistry registry;
    private final DtestOptions options;
    private final boolean server;
    private final String role;
    private final PrintStream out;
    private final Arena arena = Arena.ofShared();
    final Timings timings = new Timings();

    private InterfaceAdapter ia;
    private IaAttributes iaAttributes;
    private ProtectionZone pz;
    private EventDispatcher crEvd;
    private EventDispatcher connEvd;
    private EventDispatcher requestEvd;
    private EventDispatcher recvEvd;
    private LocalMemoryRegion rbuf;
    private LocalMemoryRegion sbuf;
    private LocalMemoryRegion tripletsIn;
    private LocalMemoryRegion tripletOut;
    private PublicServicePoint psp;
    private Endpoint ep;
    private int recvIndex;
    private RmrTriplet remote;
    private boolean connected;

    OfedSide(DatRegistry registry, DtestOptions options, boolean server, PrintStream out) {
        this.registry = registry;
        this.options = options;
        this.server = server;
        this.role = server ? "server" : "client";
        this.out = out;
    }

    /** The IA, its objects and the EP with the triplet receives posted; a server also listens. */
    void setUp() {
        ia = IaSteps.open(registry, options, timings);
        iaAttributes = ia.query().attributes();
        int len = options.bufLen();
        int rq = OfedWire.MSG_BUF_COUNT + OfedWire.MSG_BURST;
        int sq = OfedWire.MSG_BUF_COUNT + OfedWire.MAX_RDMA_RD + OfedWire.MSG_BURST;
        pz = timings.time("PZ create", ia::createPz);
        crEvd = evd(EvdFlag.CR, 10);
        connEvd = evd(EvdFlag.CONNECTION, 10);
        requestEvd = evd(EvdFlag.DTO, (OfedWire.MSG_BUF_COUNT + OfedWire.MAX_RDMA_RD + options.burst()) * 2);
        recvEvd = evd(EvdFlag.DTO, OfedWire.MSG_BUF_COUNT + Math.max(options.burst(), OfedWire.MSG_BURST));
        rbuf = lmr((long) len * rq);
        sbuf = lmr((long) len * rq);
        tripletsIn = lmr((long) OfedWire.TRIPLET * OfedWire.MSG_BUF_COUNT);
        tripletOut = lmr(OfedWire.TRIPLET);
        int readsIn = Math.max(1, Math.min(OfedWire.MAX_RDMA_RD, iaAttributes.maxRdmaReadPerEpIn()));
        int readsOut = Math.max(1, Math.min(OfedWire.MAX_RDMA_RD, iaAttributes.maxRdmaReadPerEpOut()));
        EpAttributes attributes = new EpAttributes(Math.max(len, OfedWire.TRIPLET), Math.max(len, 0x10000),
                Qos.BEST_EFFORT, Set.of(), Set.of(), rq, sq, 1, 1, readsIn, readsOut, Dat.WATERMARK_INFINITE);
        ep = timings.time("EP create", () -> ia.createEp(pz, recvEvd, requestEvd, connEvd, attributes));
        for (int i = 0; i < OfedWire.MSG_BUF_COUNT; i++) {
            ep.postRecv(List.of(new LmrTriplet(tripletsIn, (long) i * OfedWire.TRIPLET, OfedWire.TRIPLET)), i,
                    Dat.COMPLETION_DEFAULT);
        }
        rbuf.segment().fill((byte) 'a');
        sbuf.segment().fill((byte) 'b');
        if (server) {
            psp = IaSteps.listen(ia, options, crEvd, timings);
        }
    }

    /** The IA's address (what a server tells its client). */
    SocketAddress address() {
        return iaAttributes.address();
    }

    private EventDispatcher evd(EvdFlag flag, int qlen) {
        return IaSteps.evd(ia, iaAttributes.maxEvdQlen(), timings, EnumSet.of(flag), qlen);
    }

    private LocalMemoryRegion lmr(long size) {
        MemorySegment s = arena.allocate(size, 4096);
        return timings.time("LMR create", () -> ia.createLmr(pz, s, Dat.MEM_PRIV_ALL, VaType.VA));
    }

    /** Server: takes the client's request, checks its private data and accepts with it plus one. */
    void accept(long waitMicros) {
        DatEvent event = Events.next(crEvd, waitMicros, "server: a connection request on conn_qual "
                + options.connQual());
        if (!(event instanceof DatEvent.ConnectionRequest cr)) {
            throw ToolException.failure("server: waiting for a connection request, got " + Events.describe(event));
        }
        ConnectionRequest request = cr.request();
        byte[] data = request.query().privateData();
        try {
            OfedWire.checkPattern(data, 1, "server: the connect request");
        } catch (ToolException e) {
            request.reject(new byte[0]);
            throw e;
        }
        if (options.acceptDelayMicros() > 0) {
            sleep(options.acceptDelayMicros() / 1000);
        }
        long start = System.nanoTime();
        request.accept(ep, OfedWire.acceptData(data));
        Events.connection(connEvd, options.timeoutMicros(), "server: connection established",
                EventNumber.CONNECTION_ESTABLISHED);
        timings.add("connect", 1, System.nanoTime() - start);
        established();
    }

    /** Client: connects with 1..48 and checks the accept's 2..49. */
    void connect(SocketAddress serverAddress) {
        long start = System.nanoTime();
        try {
            ep.connect(serverAddress, options.connQual(), options.timeoutMicros(), OfedWire.connectData());
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, "client: connect to " + serverAddress + ": "
                    + e.getMessage(), e);
        }
        DatEvent.Connection c = Events.connection(connEvd, options.timeoutMicros(), "client: connection established",
                EventNumber.CONNECTION_ESTABLISHED, EventNumber.CONNECTION_PEER_REJECTED,
                EventNumber.CONNECTION_NON_PEER_REJECTED, EventNumber.CONNECTION_UNREACHABLE,
                EventNumber.CONNECTION_TIMED_OUT);
        if (c.number() != EventNumber.CONNECTION_ESTABLISHED) {
            throw ToolException.failure("client: connection to " + serverAddress + " failed: " + c.number().datName());
        }
        timings.add("connect", 1, System.nanoTime() - start);
        OfedWire.checkPattern(c.privateData(), 2, "client: the accept");
        established();
    }

    private void established() {
        connected = true;
        out.printf("dtest %s: CONNECTED (private data 1..48 out, 2..49 back)%n", role);
        sendTriplet(false);
        remote = receiveTriplet("the peer's RMR");
        out.printf("dtest %s: remote RMR: rmr_context 0x%x, va 0x%x, len %d%n", role, remote.rmrContext(),
                remote.targetAddress(), remote.length());
    }

    /** Sends this side's receive buffer as a triplet in network order. */
    private void sendTriplet(boolean suppress) {
        OfedWire.writeTriplet(tripletOut.segment(), rbuf.query().registeredAddress(), options.bufLen(),
                rbuf.rmrContext());
        ep.postSend(List.of(new LmrTriplet(tripletOut, 0, OfedWire.TRIPLET)), 0xaaaa,
                suppress ? SUPPRESS : Dat.COMPLETION_DEFAULT);
        if (!suppress) {
            DatEvent.DtoCompletion done = Events.dto(requestEvd, options.timeoutMicros(), DtoOperation.SEND,
                    role + ": the RMR message's send");
            if (done.cookie() != 0xaaaa) {
                throw ToolException.failure(role + ": send completion with cookie " + done.cookie());
            }
        }
    }

    private RmrTriplet receiveTriplet(String what) {
        DatEvent.DtoCompletion c = Events.dto(recvEvd, options.timeoutMicros(), DtoOperation.RECEIVE,
                role + ": " + what);
        if (c.transferredLength() != OfedWire.TRIPLET || c.cookie() != recvIndex) {
            throw ToolException.failure(role + ": " + what + ": " + c.transferredLength() + " bytes with cookie "
                    + c.cookie() + ", expected " + OfedWire.TRIPLET + " with " + recvIndex);
        }
        RmrTriplet t = OfedWire.readTriplet(tripletsIn.segment().asSlice((long) recvIndex * OfedWire.TRIPLET,
                OfedWire.TRIPLET));
        recvIndex++;
        return t;
    }

    /** Both sides write; the client sends its triplet first, the server answers. Checks what the peer wrote. */
    void rdmaWrite() {
        putString(sbuf, role + " RDMA write data...");
        List<LmrTriplet> local = List.of(new LmrTriplet(sbuf, 0, options.bufLen()));
        RmrTriplet target = new RmrTriplet(remote.rmrContext(), remote.targetAddress(), options.bufLen());
        int rate = Math.min(options.signalRate(), options.burst());
        long start = System.nanoTime();
        for (int i = 0; i < options.burst(); i++) {
            // the last write is always signaled: its completion means the source buffer was read, and
            // rdmaRead() rewrites it next
            boolean signal = (i + 1) % rate == 0 || i + 1 == options.burst();
            ep.postRdmaWrite(local, i, target, signal ? Dat.COMPLETION_DEFAULT : SUPPRESS);
            if (signal) {
                DatEvent.DtoCompletion c = Events.dto(requestEvd, options.timeoutMicros(), DtoOperation.RDMA_WRITE,
                        role + ": RDMA write " + (i + 1));
                if (c.cookie() != i) {
                    throw ToolException.failure(role + ": RDMA write completion with cookie " + c.cookie()
                            + ", expected " + i);
                }
            }
        }
        if (!server) {
            sendTriplet(true);
        }
        receiveTriplet("the peer's RDMA write message");
        long nanos = System.nanoTime() - start;
        if (server) {
            sendTriplet(true);
        }
        timings.add("RDMA write", options.burst(), nanos);
        String peer = (server ? "client" : "server") + " RDMA write data...";
        String got = getString(rbuf, peer.length());
        if (!got.equals(peer)) {
            throw ToolException.failure(role + ": the peer's RDMA writes left '" + got + "', expected '" + peer + "'");
        }
        out.printf("dtest %s: RDMA write buffer contains: %s%n", role, got);
    }

    /** Four RDMA Reads of the peer's buffer each way, then a triplet each way. */
    void rdmaRead() {
        putString(sbuf, "blah, blah, blah\n");
        putString(rbuf, role + " RDMA read data...");
        List<LmrTriplet> local = List.of(new LmrTriplet(sbuf, 0, options.bufLen()));
        RmrTriplet source = new RmrTriplet(remote.rmrContext(), remote.targetAddress(), options.bufLen());
        long start = System.nanoTime();
        for (int i = 0; i < OfedWire.MAX_RDMA_RD; i++) {
            ep.postRdmaRead(local, 0x9999, source, Dat.COMPLETION_DEFAULT);
            DatEvent.DtoCompletion c = Events.dto(requestEvd, options.timeoutMicros(), DtoOperation.RDMA_READ,
                    role + ": RDMA read " + (i + 1));
            if (c.transferredLength() != options.bufLen() || c.cookie() != 0x9999) {
                throw ToolException.failure(role + ": RDMA read moved " + c.transferredLength() + " bytes (cookie "
                        + c.cookie() + "), expected " + options.bufLen());
            }
        }
        timings.add("RDMA read", OfedWire.MAX_RDMA_RD, System.nanoTime() - start);
        sendTriplet(true);
        receiveTriplet("the peer's RDMA read message");
        String got = getString(sbuf, 24);
        if (!got.contains("RDMA")) {
            throw ToolException.failure(role + ": the RDMA reads brought '" + got + "', not the peer's buffer");
        }
        out.printf("dtest %s: RDMA read buffer contains: %s%n", role, got);
    }

    /** 100 buffer-length messages: the client pings (0x55), the server pongs (0xaa). */
    void pingPong() {
        int len = options.bufLen();
        for (int i = 0; i < OfedWire.MSG_BURST; i++) {
            ep.postRecv(List.of(new LmrTriplet(rbuf, (long) i * len, len)), i, Dat.COMPLETION_DEFAULT);
        }
        sleep(1000); // as OFED's: the peer's receives are posted before the first message
        long start = System.nanoTime();
        for (int i = 0; i < OfedWire.MSG_BURST; i++) {
            LmrTriplet slot = new LmrTriplet(sbuf, (long) i * len, len);
            if (!server) {
                sbuf.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) i * len, OfedWire.PING);
                ep.postSend(List.of(slot), 0xaaaa, SUPPRESS);
            }
            DatEvent.DtoCompletion c = Events.dto(recvEvd, options.timeoutMicros(), DtoOperation.RECEIVE,
                    role + ": ping-pong message " + (i + 1));
            if (i == 0 && server) {
                start = System.nanoTime();
            }
            if (c.transferredLength() != len || c.cookie() != i) {
                throw ToolException.failure(role + ": ping-pong message of " + c.transferredLength()
                        + " bytes with cookie " + c.cookie() + ", expected " + len + " with " + i);
            }
            byte first = rbuf.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) i * len);
            if (first != (server ? OfedWire.PING : OfedWire.PONG)) {
                throw ToolException.failure(role + ": ping-pong message " + (i + 1) + " starts with "
                        + (first & 0xff));
            }
            if (server) {
                sbuf.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) i * len, OfedWire.PONG);
                ep.postSend(List.of(slot), 0xaaaa, SUPPRESS);
            }
        }
        timings.add("message round trip", OfedWire.MSG_BURST, System.nanoTime() - start);
    }

    /** The client disconnects, the server waits; both must see DISCONNECTED. */
    void disconnect() {
        long start = System.nanoTime();
        if (!server) {
            ep.disconnect(CloseFlag.ABRUPT); // DAT_CLOSE_DEFAULT, as OFED's client
        }
        Events.connection(connEvd, options.timeoutMicros(), role + ": DISCONNECTED",
                EventNumber.CONNECTION_DISCONNECTED);
        connected = false;
        timings.add("disconnect", 1, System.nanoTime() - start);
    }

    /** Frees everything and closes the IA gracefully (which fails if anything was left). */
    void teardown() {
        long start = System.nanoTime();
        try {
            ep.free();
            ep = null;
            if (psp != null) {
                psp.free();
            }
            for (LocalMemoryRegion l : List.of(tripletOut, tripletsIn, sbuf, rbuf)) {
                l.free();
            }
            for (EventDispatcher e : List.of(crEvd, connEvd, requestEvd, recvEvd)) {
                e.free();
            }
            pz.free();
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, role + ": freeing objects failed: " + e.getMessage(), e);
        }
        timings.add("free objects", 1, System.nanoTime() - start);
        long closeStart = System.nanoTime();
        ia.close(CloseFlag.GRACEFUL);
        timings.add("IA close", 1, System.nanoTime() - closeStart);
    }

    private static void putString(LocalMemoryRegion lmr, String s) {
        byte[] b = (s + "\0").getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, lmr.segment(), 0, b.length);
    }

    private static String getString(LocalMemoryRegion lmr, int max) {
        byte[] b = lmr.segment().asSlice(0, max).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        int n = 0;
        while (n < b.length && b[n] != 0 && b[n] != '\n') {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.US_ASCII);
    }

    /** Sleeps as OFED's tools do between their steps; an interrupt ends the tool. */
    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ToolException.failure("interrupted");
        }
    }

    /** Closes the IA abruptly if it is still open (ends every wait), and frees the memory. */
    @Override
    public synchronized void close() {
        try {
            if (ia != null && !ia.isFreed()) {
                ia.close();
            }
        } catch (DatException e) {
            // closed concurrently
        } finally {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        }
    }

    boolean connected() {
        return connected;
    }
}
