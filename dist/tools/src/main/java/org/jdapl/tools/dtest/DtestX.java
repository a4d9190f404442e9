package org.jdapl.tools.dtest;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.jdapl.tools.Events;
import org.jdapl.tools.ToolException;

/**
 * {@code dtest -X}: the RC test of OFED's {@code dtestx} (dapl2-utils), on its wire, either side:
 * the server listens on conn_qual 31112 and accepts with the client's 4 bytes of private data; each
 * side posts receives into buffers 3..9 (cookies 3..9), sends the {@code DAT_RMR_TRIPLET} of its
 * buffer 1 (network order) and takes the peer's; then an RDMA Write with immediate data each way
 * (0x1111 from the server, 0x7777 from the client, each consuming the peer's receive 4), a
 * compare-and-swap each way (the client's swaps, the server's does not), two fetch-and-adds each
 * way, each step paced by dtestx's own sleeps, each result checked as dtestx checks it; the
 * disconnect ends it.
 *
 * <pre>dtest -X [-s | -h HOST] [-P IA] [-b BUF] [-t SECONDS]</pre>
 */
final class DtestX {
    static final long SERVER_ID = 31112;
    private static final int REG_MEM_COUNT = 10;
    private static final int SND_RDMA = 0;
    private static final int RCV_RDMA = 1;
    private static final int SEND = 2;
    private static final int RECV = 3;
    private static final int TRIPLET = OfedWire.TRIPLET;
    private static final int QUEUE_DEPTH = 10;
    private static final Set<CompletionFlag> SUPPRESS = EnumSet.of(CompletionFlag.SUPPRESS);

    private final DatRegistry registry;
    private final PrintStream out;
    private boolean server = true;
    private String host;
    private String iaName;
    private int bufSize = 256;
    private long timeoutMicros = 60_000_000L;
    private String role;

    private final Arena arena = Arena.ofShared();
    private InterfaceAdapter ia;
    private EventDispatcher crEvd;
    private EventDispatcher connEvd;
    private EventDispatcher dtoEvd;
    private Endpoint ep;
    private LocalMemoryRegion bufs;
    private LocalMemoryRegion atomic;
    private RmrTriplet remote;

    DtestX(DatRegistry registry, PrintStream out) {
        this.registry = registry;
        this.out = out;
    }

    /** Runs the test with dtest's command line ({@code -X} among it). */
    void run(List<String> args) {
        parse(args);
        role = server ? "Server" : "Client";
        try {
            connect();
            immediate();
            compareAndSwap();
            fetchAndAdd();
            disconnect();
            out.println("dtestx: IB extension test - immed/atomic test PASSED");
        } catch (DatException e) {
            throw new ToolException(ToolException.FAILURE, role + ": " + e.getMessage(), e);
        } finally {
            if (ia != null) {
                ia.close();
            }
            arena.close();
        }
    }

    private void parse(List<String> args) {
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            switch (a) {
                case "-X" -> { }
                case "-s" -> server = true;
                case "-h" -> {
                    host = value(args, ++i, a);
                    server = false;
                }
                case "-P" -> iaName = value(args, ++i, a);
                case "-b" -> bufSize = Integer.parseInt(value(args, ++i, a));
                case "-t" -> timeoutMicros = Long.parseLong(value(args, ++i, a)) * 1_000_000L;
                default -> throw ToolException.usage("dtest -X: unknown option " + a
                        + " (dtest -X [-s | -h HOST] [-P IA] [-b BUF] [-t SECONDS])");
            }
        }
        if (iaName == null) {
            throw ToolException.usage("dtest -X: -P IA is required");
        }
        if (bufSize < 16) {
            throw ToolException.usage("dtest -X: -b must be at least 16");
        }
    }

    private static String value(List<String> args, int i, String option) {
        if (i >= args.size()) {
            throw ToolException.usage("dtest -X: " + option + " needs a value");
        }
        return args.get(i);
    }

    private MemorySegment buf(int i) {
        return bufs.segment().asSlice((long) i * bufSize, bufSize);
    }

    /** dtestx's connect_ep: objects, receives, the connection and the exchange of RMR triplets. */
    private void connect() {
        ia = registry.open(iaName, 8);
        ProviderAttributes attrs = ia.query().provider();
        for (String name : List.of(ProviderAttributes.DAT_IB_IMMED_DATA, ProviderAttributes.DAT_IB_FETCH_AND_ADD,
                ProviderAttributes.DAT_IB_CMP_AND_SWAP)) {
            if (!attrs.offers(name)) {
                throw ToolException.failure(role + ": IA " + iaName + " does not offer " + name);
            }
        }
        ProtectionZone pz = ia.createPz();
        crEvd = ia.createEvd(2, null, EnumSet.of(EvdFlag.CR));
        connEvd = ia.createEvd(2, null, EnumSet.of(EvdFlag.CONNECTION));
        // One EVD for both queues, as dtestx's; room for every completion both can have outstanding.
        dtoEvd = ia.createEvd(2 * QUEUE_DEPTH, null, EnumSet.of(EvdFlag.DTO));
        EpAttributes attributes = new EpAttributes(bufSize, 0x10000, Qos.BEST_EFFORT, Set.of(), Set.of(),
                QUEUE_DEPTH, QUEUE_DEPTH, 1, 1, 4, 4, Dat.WATERMARK_INFINITE);
        ep = ia.createEp(pz, dtoEvd, dtoEvd, connEvd, attributes);
        // Every privilege and REMOTE_ATOMIC (DAT_IB_MEM_PRIV_REMOTE_ATOMIC): the peer's atomics target buffer 1.
        bufs = ia.createLmr(pz, arena.allocate((long) REG_MEM_COUNT * bufSize, 4096), EnumSet.allOf(MemPriv.class),
                VaType.VA);
        atomic = ia.createLmr(pz, arena.allocate(8, 8), Dat.MEM_PRIV_ALL, VaType.VA);
        for (int i = RECV; i < REG_MEM_COUNT; i++) {
            ep.postRecv(List.of(new LmrTriplet(bufs, (long) i * bufSize, bufSize)), i, Dat.COMPLETION_DEFAULT);
        }
        putString(buf(RCV_RDMA), "blah, blah, blah\n");
        putString(buf(SND_RDMA), server ? "Server data" : "Client written data");
        InetAddress own = ((InetSocketAddress) ia.query().attributes().address()).getAddress();
        if (server) {
            // dtestx's send_server_params: the parameters on TCP and the client's back; its client connects
            // right after, so the PSP listens before the exchange (dtestx's own server creates it after).
            PublicServicePoint psp = ia.createPsp(SERVER_ID, crEvd, PspFlag.CONSUMER);
            out.printf("dtestx: Server - Client: waiting to snd addr on TCP port %d%n", OfedWire.CONN_PORT);
            out.flush();
            OfedWire.ServerParams client = OfedWire.offerParamsAndReadReply(OfedWire.paramsMessage(own, iaName),
                    OfedWire.CONN_PORT, timeoutMicros / 1000);
            out.printf("dtestx: the client is %s (provider %s)%n", client.address().getHostAddress(), client.provider());
            out.printf("dtestx: Server waiting for a connection request on conn_qual %d%n", SERVER_ID);
            DatEvent e = Events.next(crEvd, timeoutMicros, "Server: a connection request");
            if (!(e instanceof DatEvent.ConnectionRequest cr)) {
                throw ToolException.failure("Server: waiting for a connection request, got " + Events.describe(e));
            }
            byte[] pdata = cr.request().query().privateData();
            cr.request().accept(ep, Arrays.copyOf(pdata, 4));
            Events.connection(connEvd, timeoutMicros, "Server: connection established",
                    EventNumber.CONNECTION_ESTABLISHED);
            psp.free();
        } else {
            // dtestx's get_server_params: the server's parameters, then ours back; it listens after that.
            OfedWire.ServerParams params = OfedWire.fetchParams(host, OfedWire.CONN_PORT, timeoutMicros / 1000,
                    OfedWire.paramsMessage(own, iaName));
            InetAddress address = params.address();
            out.printf("dtestx: the server is %s (provider %s)%n", address.getHostAddress(), params.provider());
            // dtestx's server creates its PSP only once it has read our parameters: give it that moment.
            sleep(1000);
            ep.connect(new InetSocketAddress(address, 0), SERVER_ID, timeoutMicros, new byte[4]);
            DatEvent.Connection c = Events.connection(connEvd, timeoutMicros, "Client: connection established",
                    EventNumber.CONNECTION_ESTABLISHED, EventNumber.CONNECTION_PEER_REJECTED,
                    EventNumber.CONNECTION_NON_PEER_REJECTED, EventNumber.CONNECTION_UNREACHABLE,
                    EventNumber.CONNECTION_TIMED_OUT);
            if (c.number() != EventNumber.CONNECTION_ESTABLISHED) {
                throw ToolException.failure("Client: connection to " + host + " failed: " + c.number().datName());
            }
        }
        out.printf("dtestx: %s connected%n", role);
        LocalMemoryRegion.LmrParam q = bufs.query();
        OfedWire.writeTriplet(buf(SEND), q.registeredAddress() + RCV_RDMA * (long) bufSize, bufSize, q.rmrContext());
        ep.postSend(List.of(new LmrTriplet(bufs, (long) SEND * bufSize, TRIPLET)), SEND, SUPPRESS);
        DatEvent e = Events.next(dtoEvd, timeoutMicros, role + ": the peer's RMR message");
        if (!(e instanceof DatEvent.DtoCompletion d) || d.status() != DtoStatus.SUCCESS || d.cookie() != RECV
                || d.transferredLength() != TRIPLET) {
            throw ToolException.failure(role + ": unexpected event waiting for the RMR message: " + Events.describe(e));
        }
        remote = OfedWire.readTriplet(buf(RECV));
        out.printf("dtestx: Recv RMR message: r_key_ctx=%x,va=%x,len=0x%x%n", remote.rmrContext(),
                remote.targetAddress(), remote.length());
    }

    /** dtestx's do_immediate: an RDMA Write with immediate data each way, either order of the two events. */
    private void immediate() {
        int mine = server ? 0x1111 : 0x7777;
        int theirs = server ? 0x7777 : 0x1111;
        ep.postRdmaWriteWithImmediate(List.of(new LmrTriplet(bufs, (long) SND_RDMA * bufSize, bufSize)), 0x9999,
                remote, mine, Dat.COMPLETION_DEFAULT);
        boolean written = false;
        Integer received = null;
        for (int n = 0; n < 2; n++) {
            DatEvent.ExtendedDtoCompletion x = extended(role + ": RDMA Write with immediate data");
            if (x.type() == ExtensionType.RDMA_WRITE_IMMED && x.cookie() == 0x9999 && x.transferredLength() == bufSize
                    && !written) {
                written = true;
            } else if (x.type() == ExtensionType.RDMA_WRITE_IMMED_DATA && x.cookie() == RECV + 1
                    && x.transferredLength() == bufSize && received == null) {
                received = x.immediateData();
            } else {
                throw ToolException.failure(role + ": unexpected event of the immediate write: " + x);
            }
        }
        if (received != theirs) {
            throw ToolException.failure(String.format("%s: unexpected imm_data_recv 0x%x/0x%x", role, theirs, received));
        }
        out.printf("dtestx: %s received immed_data=0x%x%n", role, received);
        out.printf("dtestx: rdma buffer contains: %s%n", getString(buf(RCV_RDMA)));
        out.println("dtestx: RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED");
    }

    /** dtestx's do_cmp_swap: the client's compare matches and swaps, the server's does not. */
    private void compareAndSwap() {
        MemorySegment target = buf(RCV_RDMA);
        target.set(ValueLayout.JAVA_LONG, 0, server ? 0x12345 : 0x54321);
        sleep(1000);
        if (server) {
            ep.postCompareAndSwap(0x654321, 0x6789A, new LmrTriplet(atomic, 0, 8), 3333, atomicTarget(),
                    Dat.COMPLETION_DEFAULT);
        } else {
            ep.postCompareAndSwap(0x12345, 0x98765, new LmrTriplet(atomic, 0, 8), 3333, atomicTarget(),
                    Dat.COMPLETION_DEFAULT);
        }
        expect(ExtensionType.CMP_AND_SWAP, "compare and swap");
        sleep(2000);
        checkAtomicResult("CMP_SWAP", target, server ? 0x54321 : 0x12345, server ? 0x98765 : 0x54321);
    }

    /** dtestx's do_fetch_add: two adds each way (0x100 from the server, 0x10 from the client). */
    private void fetchAndAdd() {
        MemorySegment target = buf(RCV_RDMA);
        long add;
        if (server) {
            long deadline = System.nanoTime() + timeoutMicros * 1000;
            while (target.get(ValueLayout.JAVA_LONG, 0) != 0x98765) {
                if (System.nanoTime() > deadline) {
                    throw ToolException.failure("Server: the client's swap never arrived");
                }
                // dtestx's own server looks once a second; looking more often starts the adds as soon as the
                // swap is there, so that both of ours land before the client checks, 1 s after its second
                sleep(10);
            }
            target.set(ValueLayout.JAVA_LONG, 0, 0x10);
            add = 0x100;
        } else {
            target.set(ValueLayout.JAVA_LONG, 0, 0x100);
            add = 0x10;
        }
        sleep(1000);
        ep.postFetchAndAdd(add, new LmrTriplet(atomic, 0, 8), 0x7777, atomicTarget(), Dat.COMPLETION_DEFAULT);
        expect(ExtensionType.FETCH_AND_ADD, "fetch and add");
        out.printf("dtestx: %s: the peer's original data = %x%n", role, atomic.segment().get(ValueLayout.JAVA_LONG, 0));
        sleep(1000);
        ep.postFetchAndAdd(add, new LmrTriplet(atomic, 0, 8), 0x7777, atomicTarget(), Dat.COMPLETION_DEFAULT);
        expect(ExtensionType.FETCH_AND_ADD, "second fetch and add");
        sleep(1000);
        checkAtomicResult("FETCH_ADD", target, server ? 0x200 : 0x20, server ? 0x30 : 0x300);
    }

    /**
     * Prints the original value the last atomic brought back and the value the peer's atomic left in
     * {@code target}, as dtestx does, and fails unless they are the ones dtestx expects.
     */
    private void checkAtomicResult(String test, MemorySegment target, long wantOriginal, long wantResult) {
        long original = atomic.segment().get(ValueLayout.JAVA_LONG, 0);
        long result = target.get(ValueLayout.JAVA_LONG, 0);
        out.printf("dtestx: %s got original data = %x, final result = %x%n", role, original, result);
        if (original != wantOriginal || result != wantResult) {
            throw ToolException.failure(role + ": " + test + " results differ from dtestx's");
        }
        out.println("dtestx: " + test + " test - PASSED");
    }

    /** dtestx's disconnect_ep: DAT_CLOSE_DEFAULT (abrupt) and the DISCONNECTED event. */
    private void disconnect() {
        try {
            ep.disconnect(CloseFlag.ABRUPT);
        } catch (DatException e) {
            if (ep.query().state() != EpState.DISCONNECTED) { // else the peer disconnected first
                throw e;
            }
        }
        Events.connection(connEvd, timeoutMicros, role + ": disconnected", EventNumber.CONNECTION_DISCONNECTED);
    }

    /** The peer's buffer 1 as an atomic's 8-byte target. */
    private RmrTriplet atomicTarget() {
        return new RmrTriplet(remote.rmrContext(), remote.targetAddress(), 8);
    }

    private void expect(ExtensionType type, String what) {
        DatEvent.ExtendedDtoCompletion x = extended(role + ": " + what);
        if (x.type() != type || x.status() != DtoStatus.SUCCESS) {
            throw ToolException.failure(role + ": unexpected event of the " + what + ": " + x);
        }
    }

    private DatEvent.ExtendedDtoCompletion extended(String what) {
        DatEvent e = Events.next(dtoEvd, timeoutMicros, what);
        if (!(e instanceof DatEvent.ExtendedDtoCompletion x) || x.status() != DtoStatus.SUCCESS) {
            throw ToolException.failure(what + ": unexpected event " + Events.describe(e));
        }
        return x;
    }

    private static void putString(MemorySegment s, String text) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
        s.set(ValueLayout.JAVA_BYTE, b.length, (byte) 0);
    }

    private static String getString(MemorySegment s) {
        int n = 0;
        while (n < s.byteSize() && n < 64 && s.get(ValueLayout.JAVA_BYTE, n) != 0) {
            n++;
        }
        return new String(s.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII).trim();
    }

    private static void sleep(long millis) {
        OfedSide.sleep(millis);
    }
}
