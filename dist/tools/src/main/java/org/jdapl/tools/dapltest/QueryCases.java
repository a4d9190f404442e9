package org.jdapl.tools.dapltest;

import static org.jdapl.dat.DatReturnType.INVALID_HANDLE;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import org.jdapl.dat.Cno;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.tools.dapltest.FunctionalTests.Case;
import org.jdapl.tools.dapltest.FunctionalTests.Context;
import org.jdapl.tools.dapltest.FunctionalTests.Feature;
import org.jdapl.tools.dapltest.FunctionalTests.NotApplicable;

/**
 * dapltest {@code -T F -f queryinfo}, OFED's cases 0 to 17: every object's query succeeds (IA, CNO,
 * EVD, PSP, RSP, CR, EP, PZ, LMR, RMR); a query of a freed IA, CNO, EVD or PSP fails with
 * DAT_INVALID_HANDLE. OFED's "bad parameter" cases pass a NULL pointer for the result, which the
 * Java binding cannot express (a query returns its result), so they do not apply.
 */
final class QueryCases {
    private QueryCases() {
    }

    /** The objects queryinfo queries. */
    private enum Target { IA, CNO, EVD, PSP, RSP, CR, EP, PZ, LMR, RMR }

    static Feature feature(String name) {
        List<Case> cases = new ArrayList<>();
        for (Target t : Target.values()) {
            cases.add(new Case("Verify " + t + " Querying information is successful using DAT_" + t + "_QUERY",
                    c -> query(c, t)));
        }
        for (Target t : List.of(Target.IA, Target.CNO, Target.EVD, Target.PSP)) {
            cases.add(new Case("Verify " + t + " Querying fails with DAT_INVALID_PARAMETER when passing a bad parameter"
                    + " to DAT_" + t + "_QUERY", c -> {
                        throw new NotApplicable("does not apply: the Java binding returns the " + t + " parameters;"
                                + " there is no result pointer to pass badly");
                    }));
            cases.add(new Case("Verify " + t + " Querying fails with DAT_INVALID_HANDLE when passing an invalid handle"
                    + " to DAT_" + t + "_QUERY", c -> freed(c, t)));
        }
        return new Feature(name, "Queryinfo", cases);
    }

    private static void query(Context c, Target t) {
        InterfaceAdapter ia = c.open();
        switch (t) {
            case IA -> {
                var q = c.call("dat_ia_query", ia::query);
                c.check(q.attributes().address() != null && q.provider() != null, "the IA address and provider attributes are there");
            }
            case CNO -> {
                Cno cno = FftCases.cno(c, ia);
                c.check(c.call("dat_cno_query", cno::query).ia() == ia, "cno_param.ia_handle is the IA");
                c.call("dat_cno_free", cno::free);
            }
            case EVD -> {
                EventDispatcher evd = FftCases.evd(c, ia, EvdFlag.DTO);
                c.check(c.call("dat_evd_query", evd::query).flags().contains(EvdFlag.DTO), "evd_flags has DTO");
                c.call("dat_evd_free", evd::free);
            }
            case PSP -> {
                EventDispatcher cr = FftCases.evd(c, ia, EvdFlag.CR);
                PublicServicePoint psp = c.call("dat_psp_create_any", () -> ia.createPspAny(cr, PspFlag.CONSUMER));
                c.check(c.call("dat_psp_query", psp::query).evd() == cr, "psp_param.evd_handle is the CR EVD");
                c.call("dat_psp_free", psp::free);
                c.call("dat_evd_free", cr::free);
            }
            case RSP -> {
                EventDispatcher cr = FftCases.evd(c, ia, EvdFlag.CR);
                ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                EventDispatcher dto = FftCases.evd(c, ia, EvdFlag.DTO);
                Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, dto, dto, null, EpAttributes.defaults()));
                ReservedServicePoint rsp = c.call("dat_rsp_create", () -> ia.createRsp(freeConnQual(c, ia), ep, cr));
                c.check(c.call("dat_rsp_query", rsp::query).ep() == ep, "rsp_param.ep_handle is the EP");
                c.call("dat_rsp_free", rsp::free);
                c.call("dat_ep_free", ep::free);
            }
            case CR -> crQuery(c, ia);
            case EP -> {
                ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                EventDispatcher dto = FftCases.evd(c, ia, EvdFlag.DTO);
                Endpoint ep = c.call("dat_ep_create", () -> ia.createEp(pz, dto, dto, null, EpAttributes.defaults()));
                var p = c.call("dat_ep_query", ep::query);
                c.check(p.pz() == pz && p.recvEvd() == dto, "ep_param has the PZ and the receive EVD");
                c.call("dat_ep_free", ep::free);
            }
            case PZ -> {
                ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                c.check(c.call("dat_pz_query", pz::query).ia() == ia, "pz_param.ia_handle is the IA");
                c.call("dat_pz_free", pz::free);
            }
            case LMR -> {
                ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                try (Arena arena = Arena.ofShared()) {
                    LocalMemoryRegion lmr = FftCases.lmr(c, ia, pz, arena, 4096);
                    var p = c.call("dat_lmr_query", lmr::query);
                    c.check(p.pz() == pz && p.length() == 4096, "lmr_param has the PZ and 4096 bytes");
                    c.call("dat_lmr_free", lmr::free);
                }
            }
            case RMR -> {
                ProtectionZone pz = c.call("dat_pz_create", ia::createPz);
                RemoteMemoryRegion rmr = FftCases.need(c, "RMRs", pz::createRmr);
                c.say("dat_rmr_create: DAT_SUCCESS");
                c.check(c.call("dat_rmr_query", rmr::query).pz() == pz, "rmr_param.pz_handle is the PZ");
                c.call("dat_rmr_free", rmr::free);
            }
        }
    }

    private static long freeConnQual(Context c, InterfaceAdapter ia) {
        EventDispatcher probe = FftCases.evd(c, ia, EvdFlag.CR);
        PublicServicePoint any = c.call("dat_psp_create_any (to find a free conn_qual)",
                () -> ia.createPspAny(probe, PspFlag.CONSUMER));
        long connQual = any.query().connQual();
        c.call("dat_psp_free", any::free);
        return connQual;
    }

    /** A CR needs a peer: a second IA connects to a PSP of the first; the CR is queried and rejected. */
    private static void crQuery(Context c, InterfaceAdapter ia) {
        InterfaceAdapter peer = c.open();
        EventDispatcher cr = FftCases.evd(c, ia, EvdFlag.CR);
        PublicServicePoint psp = c.call("dat_psp_create_any", () -> ia.createPspAny(cr, PspFlag.CONSUMER));
        ProtectionZone pz = c.call("dat_pz_create", peer::createPz);
        EventDispatcher conn = FftCases.evd(c, peer, EvdFlag.CONNECTION);
        EventDispatcher dto = FftCases.evd(c, peer, EvdFlag.DTO);
        Endpoint ep = c.call("dat_ep_create", () -> peer.createEp(pz, dto, dto, conn, EpAttributes.defaults()));
        byte[] data = {1, 2, 3, 4};
        long timeout = c.options.timeoutMicros();
        c.call("dat_ep_connect", () -> ep.connect(ia.query().attributes().address(), psp.query().connQual(), timeout, data));
        DatEvent event = c.call("dat_evd_wait (CR EVD)", () -> cr.waitEvent(timeout));
        c.check(event instanceof DatEvent.ConnectionRequest, "a connection request arrived");
        var request = ((DatEvent.ConnectionRequest) event).request();
        var p = c.call("dat_cr_query", request::query);
        c.check(p.privateData().length >= 4 && p.privateData()[0] == 1 && p.privateData()[3] == 4,
                "cr_param.private_data starts with the connect's private data");
        c.call("dat_cr_reject", () -> request.reject(new byte[0]));
        c.call("dat_evd_wait (connection EVD)", () -> conn.waitEvent(timeout));
        c.call("dat_ep_free", ep::free);
        c.call("dat_psp_free", psp::free);
    }

    private static void freed(Context c, Target t) {
        InterfaceAdapter ia = c.open();
        DatHandle handle;
        Runnable query;
        switch (t) {
            case IA -> {
                InterfaceAdapter other = c.open();
                c.call("dat_ia_close", () -> other.close());
                handle = other;
                query = other::query;
            }
            case CNO -> {
                Cno cno = FftCases.cno(c, ia);
                c.call("dat_cno_free", cno::free);
                handle = cno;
                query = cno::query;
            }
            case EVD -> {
                EventDispatcher evd = FftCases.evd(c, ia, EvdFlag.DTO);
                c.call("dat_evd_free", evd::free);
                handle = evd;
                query = evd::query;
            }
            default -> {
                EventDispatcher cr = FftCases.evd(c, ia, EvdFlag.CR);
                PublicServicePoint psp = c.call("dat_psp_create_any", () -> ia.createPspAny(cr, PspFlag.CONSUMER));
                c.call("dat_psp_free", psp::free);
                handle = psp;
                query = psp::query;
            }
        }
        c.expect("dat_" + t.name().toLowerCase(java.util.Locale.ROOT) + "_query (" + FunctionalTests.state(handle) + ")",
                query, INVALID_HANDLE);
    }
}
