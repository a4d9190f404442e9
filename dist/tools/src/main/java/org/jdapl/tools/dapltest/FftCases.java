package org.jdapl.tools.dapltest;

import static org.jdapl.dat.DatReturnType.INVALID_HANDLE;
import static org.jdapl.dat.DatReturnType.INVALID_PARAMETER;
import static org.jdapl.dat.DatReturnType.INVALID_STATE;
import static org.jdapl.dat.DatReturnType.LENGTH_ERROR;
import static org.jdapl.dat.DatReturnType.PROVIDER_NOT_FOUND;
import static org.jdapl.dat.DatReturnType.SUCCESS;
import static org.jdapl.dat.DatReturnType.TIMEOUT_EXPIRED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
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
import org.jdapl.tools.dapltest.FunctionalTests.Case;
import org.jdapl.tools.dapltest.FunctionalTests.Context;
import org.jdapl.tools.dapltest.FunctionalTests.Feature;
import org.jdapl.tools.dapltest.FunctionalTests.NotApplicable;

/**
 * The cases of dapltest {@code -T F}, numbered as OFED's dapltest numbers them (hwconn, endpoint,
 * pz, mem, connmgt, queryinfo, dataxfer, dataxfer_client); OFED leaves cqmgt and ns unimplemented,
 * so their cases are jdapl's: the EVD (DAT's completion queue) and the IA address. Where OFED passes
 * a NULL handle, the Java binding (which has no NULL handles) passes a freed one, which the manual
 * pages treat the same way (DAT_INVALID_HANDLE).
 */
final class FftCases {
    private static final long BUFFSIZE = 1024;
    private static final long QUERY_CONN_QUAL_BASE = 0xBabb00L;

    private FftCases() {
    }

    static Feature feature(String name) {
        return switch (name) {
            case "hwconn" -> new Feature(name, "Hardware connection", List.of(
                    new Case("Test if we can normally Open NIC and then close it", c -> {
                        InterfaceAdapter ia = c.open();
                        c.call("dat_ia_close(ABRUPT)", () -> ia.close(CloseFlag.ABRUPT));
                    }),
                    new Case("try to open NIC with incorrect device name (just num, one letter, multiple letter,"
                            + " letter_num, num_letter)", c -> {
                        for (String bad : List.of("40", "x", "xsdf", "x34", "34df")) {
                            c.expect("dat_ia_open(" + bad + ")", () -> c.registryOpen(bad).close(), PROVIDER_NOT_FOUND);
                        }
                    }),
                    new Case("Try to close nic with Nic handle that is not open (closed already)", c -> {
                        InterfaceAdapter ia = c.open();
                        c.call("dat_ia_close(ABRUPT)", () -> ia.close(CloseFlag.ABRUPT));
                        c.expect("dat_ia_close(ABRUPT) again", () -> ia.close(CloseFlag.ABRUPT), INVALID_HANDLE);
                    }),
                    new Case("Test if we can close NIC when the created endpoint has not been destroyed", c -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        EventDispatcher evd = evd(c, ia, EvdFlag.DTO);
                        Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, evd, evd, null, EpAttributes.defaults()));
                        c.call("dat_ia_close(ABRUPT)", () -> ia.close(CloseFlag.ABRUPT));
                        c.check(ep.isFreed() && pz.isFreed() && evd.isFreed(), "the EP, EVD and PZ were freed with the IA");
                    })));
            case "cqmgt" -> new Feature(name, "CQ (EVD) management", List.of(
                    new Case("create a DTO EVD of 100 entries, query it, free it", c -> {
                        InterfaceAdapter ia = c.open();
                        EventDispatcher evd = c.call("dat_evd_create(100, DTO)",
                                () -> ia.createEvd(100, null, EnumSet.of(EvdFlag.DTO)));
                        int qlen = c.call("dat_evd_query", () -> evd.query().qlen());
                        c.check(qlen >= 100, "evd_qlen " + qlen + " >= 100");
                        c.call("dat_evd_free", evd::free);
                    }),
                    new Case("free an EVD that an endpoint still uses", c -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        EventDispatcher evd = evd(c, ia, EvdFlag.DTO);
                        Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, evd, evd, null, EpAttributes.defaults()));
                        c.expect("dat_evd_free (in use)", evd::free, INVALID_STATE);
                        c.call("dat_ep_free", ep::free);
                        c.call("dat_evd_free", evd::free);
                    }),
                    new Case("resize an EVD to twice its entries", c -> {
                        InterfaceAdapter ia = c.open();
                        EventDispatcher evd = evd(c, ia, EvdFlag.DTO);
                        c.call("dat_evd_resize(200)", () -> evd.resize(200));
                        int qlen = c.call("dat_evd_query", () -> evd.query().qlen());
                        c.check(qlen >= 200, "evd_qlen " + qlen + " >= 200");
                    }),
                    new Case("dequeue from an empty EVD (DAT_QUEUE_EMPTY)", c -> {
                        InterfaceAdapter ia = c.open();
                        EventDispatcher evd = evd(c, ia, EvdFlag.DTO);
                        Optional<DatEvent> e = c.call("dat_evd_dequeue", () -> evd.dequeue());
                        c.check(e.isEmpty(), "no event (DAT_QUEUE_EMPTY)");
                    }),
                    new Case("post a software event and dequeue it", c -> {
                        InterfaceAdapter ia = c.open();
                        EventDispatcher evd = evd(c, ia, EvdFlag.SOFTWARE);
                        Object pointer = new Object();
                        c.call("dat_evd_post_se", () -> evd.postSoftwareEvent(pointer));
                        Optional<DatEvent> e = c.call("dat_evd_dequeue", () -> evd.dequeue());
                        c.check(e.isPresent() && e.get() instanceof DatEvent.Software s && s.pointer() == pointer,
                                "DAT_SOFTWARE_EVENT with the posted pointer");
                    })));
            case "endpoint" -> new Feature(name, "EndPoint management", List.of(
                    new Case("Test if we can normally create endpoint and destroy it", c -> endpoint(c, false)),
                    new Case("try to create endpoint with pz already destroyed", c -> endpoint(c, true)),
                    new Case("try to destroy ep with descriptor still in working queue", c -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        EventDispatcher evd = evd(c, ia, EvdFlag.DTO);
                        Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, evd, evd, null, EpAttributes.defaults()));
                        try (Arena arena = Arena.ofShared()) {
                            LocalMemoryRegion lmr = lmr(c, ia, pz, arena, 4096);
                            c.call("dat_ep_post_recv(4096)", () -> ep.postRecv(List.of(new LmrTriplet(lmr, 0, 4096)), 1,
                                    Dat.COMPLETION_DEFAULT));
                            c.call("dat_ep_free", ep::free);
                            // dat_ep_free(3): its completions may or may not be on the EVD; drain them.
                            int n = 0;
                            while (c.call("dat_evd_dequeue", () -> evd.dequeue()).isPresent()) {
                                n++;
                            }
                            c.say(n + " flushed completion(s) dequeued (the manual page allows either)");
                            c.call("dat_lmr_free", lmr::free);
                        }
                    })));
            case "pz" -> new Feature(name, "Protection Zone management", List.of(
                    new Case("Test if we can normally create pz and destroy it", c -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        c.call("dat_pz_free", pz::free);
                    }),
                    new Case("try to destroy pz with vi still associated with it", c -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        EventDispatcher evd = evd(c, ia, EvdFlag.DTO);
                        Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, evd, evd, null, EpAttributes.defaults()));
                        c.expect("dat_pz_free (EP in it)", pz::free, INVALID_STATE);
                        c.call("dat_ep_free", ep::free);
                        c.call("dat_pz_free", pz::free);
                    }),
                    new Case("try to destroy pz with registered memory still associated with it", c -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        try (Arena arena = Arena.ofShared()) {
                            LocalMemoryRegion lmr = lmr(c, ia, pz, arena, BUFFSIZE);
                            c.expect("dat_pz_free (LMR in it)", pz::free, INVALID_STATE);
                            c.call("dat_lmr_free", lmr::free);
                        }
                        c.call("dat_pz_free", pz::free);
                    })));
            case "mem" -> new Feature(name, "Memory register/deregister", List.of(
                    new Case("Test if we can register typical size of memory then deregister it", c -> mem(c, 0)),
                    new Case("Test if we can register typical size of memory deregister, then register it again",
                            c -> mem(c, 1)),
                    new Case("Try to register memory with memory size 0", c -> mem(c, 2)),
                    new Case("Try to register memory with a pz that is not valid (freed)", c -> mem(c, 3)),
                    new Case("Try to deregister memory with an lmr_handle that is not valid (freed)", c -> mem(c, 4))));
            case "connmgt" -> new Feature(name, "Connect Management (Server side)", List.of(
                    new Case("Ensure time in dat_evd_wait works correctly", c -> connmgt(c, 10_000)),
                    new Case("Attempt to use timeout of 0 in dat_evd_wait", c -> connmgt(c, 0))));
            case "queryinfo" -> QueryCases.feature(name);
            case "dataxfer" -> new Feature(name, "Dataxfer", List.of(
                    new Case("Call dat_ep_post_send with an ep_handle that is not valid (freed)", c -> dataxfer(c, 0)),
                    new Case("Call dat_evd_wait with an evd that is not valid (freed)", c -> dataxfer(c, 1)),
                    new Case("Call dat_evd_wait with empty send queue", c -> dataxfer(c, 2)),
                    new Case("Call dat_ep_post_recv with an ep_handle that is not valid (freed)", c -> dataxfer(c, 3))));
            case "dataxfer_client" -> new Feature(name, "Dataxfer client", List.of(
                    new Case("connect to the dapltest server, let it accept, disconnect", c -> c.withServer(target -> {
                        InterfaceAdapter ia = c.open();
                        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                        Side side = new Side(ia, pz, ia.query().attributes(), c.options.timeoutMicros(), false,
                                Qos.BEST_EFFORT);
                        try (Client client = new Client(side, target.address(), target.connQual())) {
                            c.say("dat_ep_connect to " + target.address() + ", conn_qual 0x"
                                    + Long.toHexString(target.connQual()) + ": DAT_CONNECTION_EVENT_ESTABLISHED");
                            int session = client.request(c.options.args());
                            c.say("the server accepted the request (session " + session + ")");
                            client.awaitResult();
                        }
                        c.say("dat_ep_disconnect: DAT_CONNECTION_EVENT_DISCONNECTED");
                        c.call("dat_pz_free", pz::free);
                        c.call("dat_ia_close(GRACEFUL)", () -> ia.close(CloseFlag.GRACEFUL));
                    }))));
            case "ns" -> new Feature(name, "Name service (IA address)", List.of(
                    new Case("the IA address of dat_ia_query reaches the IA: a second IA connects to a PSP there",
                            c -> ns(c, true)),
                    new Case("a conn_qual nobody listens on at that address is refused, unreachable or times out",
                            c -> ns(c, false))));
            default -> throw new IllegalArgumentException(name);
        };
    }

    static EventDispatcher evd(Context c, InterfaceAdapter ia, EvdFlag flag) {
        return c.call("dat_evd_create(" + flag + ")", () -> ia.createEvd(16, null, EnumSet.of(flag)));
    }

    static LocalMemoryRegion lmr(Context c, InterfaceAdapter ia, ProtectionZone pz, Arena arena, long size) {
        MemorySegment memory = arena.allocate(size, 4096);
        return c.call("dat_lmr_create(" + size + ")", () -> ia.createLmr(pz, memory, Dat.MEM_PRIV_ALL, VaType.VA));
    }

    private static void endpoint(Context c, boolean destroyPzEarly) {
        InterfaceAdapter ia = c.open();
        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
        if (destroyPzEarly) {
            c.call("dat_pz_free", pz::free);
        }
        EventDispatcher send = c.call("dat_evd_create(DTO, RMR_BIND)",
                () -> ia.createEvd(10, null, EnumSet.of(EvdFlag.DTO, EvdFlag.RMR_BIND)));
        EventDispatcher recv = evd(c, ia, EvdFlag.DTO);
        EventDispatcher conn = evd(c, ia, EvdFlag.CONNECTION);
        Endpoint[] ep = new Endpoint[1];
        c.expect("dat_ep_create" + (destroyPzEarly ? " (freed PZ)" : ""),
                () -> ep[0] = ia.createEp(pz, recv, send, conn, EpAttributes.defaults()),
                destroyPzEarly ? INVALID_HANDLE : SUCCESS);
        if (ep[0] != null) {
            c.call("dat_ep_free", ep[0]::free);
        }
        for (EventDispatcher evd : List.of(send, recv, conn)) {
            c.call("dat_evd_free", evd::free);
        }
        if (!destroyPzEarly) {
            c.call("dat_pz_free", pz::free);
        }
    }

    private static void mem(Context c, int flag) {
        InterfaceAdapter ia = c.open();
        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment memory = flag == 2 ? arena.allocate(0) : arena.allocate(BUFFSIZE, 4096);
            switch (flag) {
                case 0, 1 -> {
                    LocalMemoryRegion lmr = lmr(c, ia, pz, arena, BUFFSIZE);
                    c.call("dat_lmr_free", lmr::free);
                    if (flag == 1) {
                        LocalMemoryRegion again = c.call("dat_lmr_create(" + BUFFSIZE + ") again",
                                () -> ia.createLmr(pz, memory, Dat.MEM_PRIV_ALL, VaType.VA));
                        c.call("dat_lmr_free", again::free);
                    }
                }
                case 2 -> c.expect("dat_lmr_create(0 bytes)",
                        () -> ia.createLmr(pz, memory, Dat.MEM_PRIV_ALL, VaType.VA).free(), LENGTH_ERROR, INVALID_PARAMETER);
                case 3 -> {
                    ProtectionZone freed = c.call("dat_pz_create", ia::createPz);
                    c.call("dat_pz_free", freed::free);
                    c.expect("dat_lmr_create (freed PZ)",
                            () -> ia.createLmr(freed, memory, Dat.MEM_PRIV_ALL, VaType.VA).free(), INVALID_HANDLE);
                }
                default -> {
                    LocalMemoryRegion lmr = lmr(c, ia, pz, arena, BUFFSIZE);
                    c.call("dat_lmr_free", lmr::free);
                    c.expect("dat_lmr_free (freed LMR)", lmr::free, INVALID_HANDLE);
                }
            }
        }
        c.call("dat_pz_free", pz::free);
    }

    private static void connmgt(Context c, long timeoutMicros) {
        InterfaceAdapter ia = c.open();
        EventDispatcher cr = evd(c, ia, EvdFlag.CR);
        PublicServicePoint psp = c.call("dat_psp_create_any", () -> ia.createPspAny(cr, PspFlag.CONSUMER));
        long start = System.nanoTime();
        c.expect("dat_evd_wait(" + timeoutMicros + " us)", () -> cr.waitEvent(timeoutMicros), TIMEOUT_EXPIRED);
        long waited = (System.nanoTime() - start) / 1_000;
        c.check(waited >= timeoutMicros && waited < timeoutMicros + 5_000_000,
                "returned after " + waited + " us, not before the timeout nor 5 s after it");
        c.call("dat_psp_free", psp::free);
        c.call("dat_evd_free", cr::free);
    }

    private static void dataxfer(Context c, int test) {
        InterfaceAdapter ia = c.open();
        ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
        EventDispatcher send = evd(c, ia, EvdFlag.DTO);
        EventDispatcher recv = evd(c, ia, EvdFlag.DTO);
        try (Arena arena = Arena.ofShared()) {
            LocalMemoryRegion lmr = lmr(c, ia, pz, arena, 4096);
            List<LmrTriplet> iov = List.of(new LmrTriplet(lmr, 0, 4096));
            switch (test) {
                case 0, 3 -> {
                    Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, recv, send, null, EpAttributes.defaults()));
                    c.call("dat_ep_free", ep::free);
                    if (test == 0) {
                        c.expect("dat_ep_post_send (freed EP)", () -> ep.postSend(iov, 1, Dat.COMPLETION_DEFAULT),
                                INVALID_HANDLE);
                    } else {
                        c.expect("dat_ep_post_recv (freed EP)", () -> ep.postRecv(iov, 1, Dat.COMPLETION_DEFAULT),
                                INVALID_HANDLE);
                    }
                }
                case 1 -> {
                    EventDispatcher freed = evd(c, ia, EvdFlag.DTO);
                    c.call("dat_evd_free", freed::free);
                    c.expect("dat_evd_wait (freed EVD)", () -> freed.waitEvent(Dat.TIMEOUT_INFINITE), INVALID_HANDLE);
                }
                default -> c.expect("dat_evd_wait(1 s) on the empty send EVD", () -> send.waitEvent(1_000_000),
                        TIMEOUT_EXPIRED);
            }
            c.call("dat_lmr_free", lmr::free);
        }
        c.call("dat_evd_free", send::free);
        c.call("dat_evd_free", recv::free);
        c.call("dat_pz_free", pz::free);
    }

    private static void ns(Context c, boolean listening) {
        InterfaceAdapter server = c.open();
        InterfaceAdapter client = c.open();
        var address = c.call("dat_ia_query", () -> server.query().attributes().address());
        c.say("the IA address is " + address);
        EventDispatcher cr = evd(c, server, EvdFlag.CR);
        PublicServicePoint psp = listening ? c.call("dat_psp_create_any", () -> server.createPspAny(cr, PspFlag.CONSUMER))
                : null;
        long connQual = listening ? psp.query().connQual() : QUERY_CONN_QUAL_BASE + 0x5e;
        ProtectionZone pz = c.call("dat_pz_create", client::createPz);
        EventDispatcher conn = evd(c, client, EvdFlag.CONNECTION);
        EventDispatcher dto = evd(c, client, EvdFlag.DTO);
        Endpoint ep = c.call("dat_ep_create", () -> client.createEp(pz, dto, dto, conn, EpAttributes.defaults()));
        long timeout = c.options.timeoutMicros();
        boolean[] refused = {false};
        c.expect("dat_ep_connect(" + address + ", 0x" + Long.toHexString(connQual) + ")",
                () -> {
                    try {
                        ep.connect(address, connQual, timeout, new byte[0]);
                    } catch (DatException e) {
                        refused[0] = true;
                        throw e;
                    }
                }, listening ? new DatReturnType[] {SUCCESS}
                        : new DatReturnType[] {SUCCESS, DatReturnType.INVALID_ADDRESS});
        if (listening) {
            DatEvent request = c.call("dat_evd_wait (CR EVD)", () -> cr.waitEvent(timeout));
            c.check(request instanceof DatEvent.ConnectionRequest, "a connection request arrived");
            c.call("dat_cr_reject", () -> ((DatEvent.ConnectionRequest) request).request().reject(new byte[0]));
        }
        if (!refused[0]) {
            DatEvent event = c.call("dat_evd_wait (connection EVD)", () -> conn.waitEvent(timeout * 2));
            EventNumber n = event instanceof DatEvent.Connection e ? e.number() : null;
            c.say("the connection event: " + (n == null ? String.valueOf(event) : n.datName()));
            Set<EventNumber> allowed = listening ? Set.of(EventNumber.CONNECTION_PEER_REJECTED)
                    : Set.of(EventNumber.CONNECTION_NON_PEER_REJECTED, EventNumber.CONNECTION_UNREACHABLE,
                            EventNumber.CONNECTION_TIMED_OUT, EventNumber.CONNECTION_PEER_REJECTED);
            c.check(n != null && allowed.contains(n), "one of " + allowed.stream().map(EventNumber::datName).toList());
        }
        c.call("dat_ep_free", ep::free);
        if (psp != null) {
            c.call("dat_psp_free", psp::free);
        }
    }

    /**
     * A case that needs an object the provider does not offer does not apply: the manual pages let a
     * provider answer DAT_MODEL_NOT_SUPPORTED (e.g. RMRs on a device that does not check memory
     * window bounds) or DAT_NOT_IMPLEMENTED.
     */
    static <T> T need(Context c, String what, Supplier<T> create) {
        try {
            return create.get();
        } catch (DatException e) {
            if (e.type() == DatReturnType.NOT_IMPLEMENTED
                    || e.type() == DatReturnType.MODEL_NOT_SUPPORTED) {
                throw new NotApplicable("does not apply: the provider has no " + what + " (" + e.getMessage() + ")");
            }
            throw new FunctionalTests.CaseFailure(what + ": " + e.getMessage());
        }
    }

    static Cno cno(Context c, InterfaceAdapter ia) {
        Cno cno = need(c, "CNOs", () -> ia.createCno(evd -> { }));
        c.say("dat_cno_create: DAT_SUCCESS");
        return cno;
    }
}
