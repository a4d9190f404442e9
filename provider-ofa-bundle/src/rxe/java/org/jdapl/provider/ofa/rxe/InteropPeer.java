package org.jdapl.provider.ofa.rxe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * jdapl's side of the interop cases with a C uDAPL peer ({@code scripts/rxe/dat-interop.c}, built
 * against OFED's libdat2 and run through its cma provider): the same program in Java, on an
 * {@code ofa-v2-*} IA, so that OFED's wire convention is what both speak. Either side may be C:
 *
 * <pre>InteropPeer &lt;device&gt; server|client &lt;case&gt; [&lt;server address&gt;]</pre>
 *
 * or {@code InteropPeer <device> -}, which reads such commands ({@code server <case>}, {@code client
 * <case> <address>}) from its standard input and runs them one after the other in the one JVM (the
 * harness saves a JVM start per case that way).
 *
 * Cases: {@code reject} (the server rejects with 48 bytes of private data, the client must see
 * PEER_REJECTED with them); {@code disc-<client|server>-<graceful|abrupt>} (connect with OFED
 * dtest's private data pattern, a message each way, then the named side disconnects with the named
 * flag and both must see DISCONNECTED). Prints {@code PASS <case> <side>} and exits 0, or a reason
 * and exits 1.
 */
public final class InteropPeer {
    static final long CONN_QUAL = 45301;
    private static final long TIMEOUT = 30_000_000;

    private InteropPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[1].equals("-")) {
            commands(args[0]);
            return;
        }
        if (args.length < 3 || (args[1].equals("client") && args.length < 4)) {
            System.err.println("usage: InteropPeer <device> server|client <case> [<server address>]");
            System.exit(2);
        }
        boolean server = args[1].equals("server");
        String kase = args[2];
        try {
            run(args[0], server, kase, server ? null : InetAddress.getByName(args[3]));
            System.out.println("PASS " + kase + " " + args[1]);
            System.exit(0);
        } catch (Throwable t) {
            System.out.println("FAIL " + kase + " " + args[1] + ": " + t);
            System.exit(1);
        }
    }

    private static void commands(String device) throws java.io.IOException {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                java.nio.charset.StandardCharsets.US_ASCII));
        System.out.println("ready");
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split("\\s+");
            if (a[0].equals("quit")) {
                break;
            }
            if (a.length < 2 || (a[0].equals("client") && a.length < 3)) {
                System.out.println("FAIL bad command '" + line + "'");
                continue;
            }
            boolean server = a[0].equals("server");
            try {
                run(device, server, a[1], server ? null : InetAddress.getByName(a[2]));
                System.out.println("PASS " + a[1] + " " + a[0]);
            } catch (Throwable t) {
                System.out.println("FAIL " + a[1] + " " + a[0] + ": " + t);
            }
        }
        System.exit(0);
    }

    private static void run(String device, boolean server, String kase, InetAddress serverAddress) {
        OfaProvider provider = new OfaProvider();
        InterfaceAdapter ia = provider.open(new IaSpec("ofa-v2-" + device + "-1", device + " 1", "", true,
                "interop"), 16);
        try (Arena arena = Arena.ofConfined()) {
            ProtectionZone pz = ia.createPz();
            EventDispatcher dto = ia.createEvd(16, null, EnumSet.of(EvdFlag.DTO));
            EventDispatcher conn = ia.createEvd(8, null, EnumSet.of(EvdFlag.CONNECTION));
            EventDispatcher crEvd = ia.createEvd(8, null, EnumSet.of(EvdFlag.CR));
            Endpoint ep = ia.createEp(pz, dto, dto, conn, EpAttributes.defaults().withQueueDepths(4, 4));
            MemorySegment buf = arena.allocate(8192, 4096);
            LocalMemoryRegion lmr = ia.createLmr(pz, buf, Dat.MEM_PRIV_ALL, VaType.VA);
            ep.postRecv(List.of(new LmrTriplet(lmr, 4096, 64)), 1, Dat.COMPLETION_DEFAULT);
            byte[] pattern = pattern(1);
            if (server) {
                PublicServicePoint psp = ia.createPsp(CONN_QUAL, crEvd, PspFlag.CONSUMER);
                System.out.println("listening");
                DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) crEvd.waitEvent(60_000_000);
                byte[] got = cr.request().query().privateData();
                check(Arrays.equals(pattern, Arrays.copyOf(got, 48)), "the request's private data");
                check(got.length >= 48, "the request's private data length " + got.length);
                if (kase.equals("reject")) {
                    cr.request().reject(pattern(3));
                    psp.free();
                    return;
                }
                cr.request().accept(ep, pattern(2));
                expect(conn.waitEvent(TIMEOUT), EventNumber.CONNECTION_ESTABLISHED);
                psp.free();
            } else {
                ep.connect(new InetSocketAddress(serverAddress, 0), CONN_QUAL, TIMEOUT, pattern);
                DatEvent e = conn.waitEvent(TIMEOUT);
                if (kase.equals("reject")) {
                    expect(e, EventNumber.CONNECTION_PEER_REJECTED);
                    byte[] data = ((DatEvent.Connection) e).privateData();
                    check(data.length >= 48 && Arrays.equals(pattern(3), Arrays.copyOf(data, 48)),
                            "the reject's private data (" + data.length + " bytes)");
                    return;
                }
                expect(e, EventNumber.CONNECTION_ESTABLISHED);
                byte[] data = ((DatEvent.Connection) e).privateData();
                check(Arrays.equals(pattern(2), Arrays.copyOf(data, 48)), "the accept's private data");
            }
            // one message each way: the client first
            if (!server) {
                ep.postSend(List.of(new LmrTriplet(lmr, 0, 16)), 2, Dat.COMPLETION_DEFAULT);
                awaitDto(dto, DtoOperation.SEND);
                awaitDto(dto, DtoOperation.RECEIVE);
            } else {
                awaitDto(dto, DtoOperation.RECEIVE);
                ep.postSend(List.of(new LmrTriplet(lmr, 0, 16)), 2, Dat.COMPLETION_DEFAULT);
                awaitDto(dto, DtoOperation.SEND);
            }
            String[] parts = kase.split("-");
            check(parts.length == 3 && parts[0].equals("disc"), "unknown case " + kase);
            boolean initiator = parts[1].equals(server ? "server" : "client");
            if (initiator) {
                ep.disconnect(parts[2].equals("graceful") ? CloseFlag.GRACEFUL : CloseFlag.ABRUPT);
            }
            expect(conn.waitEvent(TIMEOUT), EventNumber.CONNECTION_DISCONNECTED);
        } finally {
            ia.close(CloseFlag.ABRUPT);
        }
    }

    private static void awaitDto(EventDispatcher evd, DtoOperation op) {
        DatEvent e = evd.waitEvent(TIMEOUT);
        check(e instanceof DatEvent.DtoCompletion d && d.status() == DtoStatus.SUCCESS && d.operation() == op,
                "expected a " + op + " completion, got " + e);
    }

    /** 48 bytes i + first, as OFED's dtest patterns its private data. */
    static byte[] pattern(int first) {
        byte[] b = new byte[48];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i + first);
        }
        return b;
    }

    private static void expect(DatEvent e, EventNumber n) {
        check(e.number() == n, "expected " + n.datName() + ", got " + e.number().datName());
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }
}
