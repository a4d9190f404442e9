package org.jdapl.conformance.cases;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jdapl.conformance.Conformance;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.VaType;

/** The cases of dat_ep_free (FREE_*). */
public final class EpFreeCases {
    private static final byte[] NONE = new byte[0];

    static void isFreed(Endpoint ep, String what) {
        Checks.check(ep.isFreed(), what + ": the EP does not say it is freed");
        Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_EP, "dat_ep_query " + what,
                ep::query);
    }

    static void freeIn(Endpoint ep, EpState state) {
        Checks.state(ep, state, "before free");
        Checks.succeeds("dat_ep_free in " + state, ep::free);
        isFreed(ep, "after free in " + state);
    }

    /** A request at a PROVIDER PSP on side {@code b}, or null if the provider creates no EPs. */
    static DatEvent.ConnectionRequest tentative(Rig rig, Side a, Side b) {
        long q = rig.connQual();
        PublicServicePoint psp;
        try {
            psp = b.ia.createPsp(q, b.crEvd, PspFlag.PROVIDER);
        } catch (DatException e) {
            if (e.type() == DatReturnType.MODEL_NOT_SUPPORTED && !b.ia.query().provider().pspCreatesEp()) {
                return null;
            }
            throw e;
        }
        var cr = b.connectHere(a.ep(), q, NONE, "at a PROVIDER PSP");
        psp.free();
        Checks.check(cr.request().query().localEp() != null, "a request at a PROVIDER PSP names no EP");
        Checks.state(cr.request().query().localEp(), EpState.TENTATIVE_CONNECTION_PENDING, "the provider-created EP");
        return cr;
    }

    @Conformance("FREE_01")
    public void freeWorksInEveryAllowedState(Rig rig) {
        Side[] s = rig.pair();
        freeIn(s[0].ep(), EpState.UNCONNECTED);
        long q = rig.connQual();
        s[1].psp(q);
        Endpoint pending = s[0].ep();
        s[1].connectHere(pending, q, NONE, "at the passive side");
        freeIn(pending, EpState.ACTIVE_CONNECTION_PENDING);
        Link connected = Link.open(rig);
        freeIn(connected.epA(), EpState.CONNECTED);
        Link draining = Link.open(rig);
        Stall stall = Stall.start(draining);
        draining.epA().disconnect(CloseFlag.GRACEFUL);
        freeIn(draining.epA(), EpState.DISCONNECT_PENDING);
        stall.release();
        Link done = Link.open(rig);
        done.epA().disconnect(CloseFlag.ABRUPT);
        DisconnectCases.ended(done.a(), done.epA(), EventNumber.CONNECTION_DISCONNECTED, "after disconnect");
        freeIn(done.epA(), EpState.DISCONNECTED);
        rig.note("COMPLETION_PENDING not produced (the API offers no way to hold the passive side in it)");
    }

    @Conformance("FREE_02")
    public void freeWhileReservedOrPendingFailsInvalidState(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        Endpoint reserved = b.ep();
        long q = rig.connQual();
        b.ia.createRsp(q, reserved, b.crEvd);
        refused(reserved, EpState.RESERVED);
        b.connectHere(a.ep(), q, NONE, "at the RSP");
        refused(reserved, EpState.PASSIVE_CONNECTION_PENDING);
        var cr = tentative(rig, a, b);
        if (cr == null) {
            throw new Skip("RESERVED and PASSIVE_CONNECTION_PENDING pass; TENTATIVE_CONNECTION_PENDING cannot be"
                    + " produced: the provider creates no EPs at PSPs");
        }
        refused(cr.request().query().localEp(), EpState.TENTATIVE_CONNECTION_PENDING);
    }

    private static void refused(Endpoint ep, EpState state) {
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_ep_free in " + state, ep::free);
        Checks.check(!ep.isFreed(), "a refused free freed the EP in " + state);
        Checks.state(ep, state, "after a refused free");
    }

    @Conformance("FREE_03")
    public void freeDuringSetupAbortsEstablishment(Rig rig) {
        Pending p = Pending.open(rig);
        Side a = p.a();
        Side b = p.b();
        Endpoint epA = p.epA();
        var cr = p.cr();
        epA.free();
        Endpoint epB = b.ep();
        DatException sync = Checks.attempt("accept of a request whose EP was freed",
                () -> cr.request().accept(epB, NONE));
        if (sync != null) {
            Checks.state(epB, EpState.UNCONNECTED, "the passive EP after a failed accept");
        } else {
            DatEvent.Connection first = Events.connectionOneOf(b.connEvd, Set.of(EventNumber.CONNECTION_ESTABLISHED,
                    EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR), epB, rig.eventTimeout(), "after the accept");
            if (first.number() == EventNumber.CONNECTION_ESTABLISHED) {
                Events.connectionOneOf(b.connEvd, Set.of(EventNumber.CONNECTION_DISCONNECTED,
                        EventNumber.CONNECTION_BROKEN), epB, rig.eventTimeout(),
                        "to end the connection to a freed EP");
                rig.note("the peer saw ESTABLISHED, then the connection went down");
            }
            Checks.state(epB, EpState.DISCONNECTED, "the passive EP at the end");
        }
        Events.none(b.connEvd, rig.grace(), "at the passive side at the end");
    }

    @Conformance("FREE_04")
    public void freeOfConnectedEpTearsDownConnection(Rig rig) {
        Link l = Link.open(rig);
        List<Long> recvs = DisconnectCases.postReceives(l.b(), l.epB(), 4, 100);
        l.epA().free();
        DisconnectCases.peerEnded(rig, l, recvs, "a freed EP");
        Events.none(l.b().connEvd, rig.grace(), "at the peer after the teardown");
    }

    @Conformance("FREE_05")
    public void everyOperationOnFreedEpFailsInvalidHandle(Rig rig) {
        Link l = Link.open(rig);
        Endpoint ep = l.epA();
        LocalMemoryRegion lmr = l.a().lmr(256, (byte) 0);
        LocalMemoryRegion remote = l.b().lmr(256, (byte) 0);
        RemoteMemoryRegion rmr = DisconnectCases.rmrOrNull(l.a(), rig);
        ep.free();
        var iov = List.of(Link.local(lmr, 0, 64));
        var rt = Link.remote(remote, 0, 64);
        DatReturnSubtype sub = DatReturnSubtype.INVALID_HANDLE_EP;
        DatReturnType ih = DatReturnType.INVALID_HANDLE;
        Checks.fails(ih, sub, "dat_ep_query", ep::query);
        Checks.fails(ih, sub, "dat_ep_get_status", ep::status);
        Checks.fails(ih, sub, "dat_ep_modify", () -> ep.modify(EpAttributes.defaults(), null, null, null));
        Checks.fails(ih, sub, "dat_ep_connect", () -> ep.connect(l.b().address(), 1, rig.longConnectTimeoutMicros(), NONE));
        Checks.fails(ih, sub, "dat_ep_dup_connect", () -> ep.dupConnect(l.epB(), rig.longConnectTimeoutMicros(), NONE,
                org.jdapl.dat.Qos.BEST_EFFORT));
        Checks.fails(ih, sub, "dat_ep_common_connect", () -> ep.commonConnect(l.b().address(),
                rig.longConnectTimeoutMicros(), NONE));
        for (CloseFlag flag : CloseFlag.values()) {
            Checks.fails(ih, sub, "dat_ep_disconnect " + flag, () -> ep.disconnect(flag));
        }
        Checks.fails(ih, sub, "dat_ep_post_send", () -> ep.postSend(iov, 1, Dat.COMPLETION_DEFAULT));
        Checks.fails(ih, sub, "dat_ep_post_send_with_invalidate",
                () -> ep.postSendWithInvalidate(iov, 1, Dat.COMPLETION_DEFAULT, false, 0));
        Checks.fails(ih, sub, "dat_ep_post_recv", () -> ep.postRecv(iov, 1, Dat.COMPLETION_DEFAULT));
        Checks.fails(ih, sub, "dat_ep_post_rdma_read", () -> ep.postRdmaRead(iov, 1, rt, Dat.COMPLETION_DEFAULT));
        Checks.fails(ih, sub, "dat_ep_post_rdma_read_to_rmr",
                () -> ep.postRdmaReadToRmr(rt, 1, rt, Dat.COMPLETION_DEFAULT));
        Checks.fails(ih, sub, "dat_ep_post_rdma_write", () -> ep.postRdmaWrite(iov, 1, rt, Dat.COMPLETION_DEFAULT));
        Checks.fails(ih, sub, "dat_ep_reset", ep::reset);
        Checks.fails(ih, sub, "dat_ep_recv_query", ep::recvQuery);
        Checks.fails(ih, sub, "dat_ep_set_watermark", () -> ep.setWatermark(1, 1));
        Checks.fails(ih, sub, "dat_get_handle_type", ep::handleType);
        Checks.fails(ih, sub, "dat_set_consumer_context", () -> ep.setConsumerContext("x"));
        Checks.fails(ih, sub, "dat_get_consumer_context", ep::consumerContext);
        Checks.fails(ih, sub, "a second dat_ep_free", ep::free);
        if (rmr != null) {
            Checks.fails(ih, null, "dat_rmr_bind with a freed EP",
                    () -> rmr.bind(lmr, 0, 64, Dat.MEM_PRIV_ALL, VaType.VA, ep, 1, Dat.COMPLETION_DEFAULT));
        }
        Checks.check(ep.isFreed(), "the freed EP does not say it is freed");
        Events.none(l.a().reqEvd, rig.grace(), "after refused posts on a freed EP");
        Events.none(l.a().recvEvd, Duration.ofMillis(1), "after refused posts on a freed EP");
    }

    @Conformance("FREE_06")
    public void noEventForEpAfterFreeReturns(Rig rig) {
        Link l = Link.open(rig);
        Set<Long> posted = new HashSet<>(DisconnectCases.postReceives(l.a(), l.epA(), 4, 100));
        Stall stall = Stall.start(l);
        posted.addAll(stall.cookies());
        l.epA().free();
        EventDispatcher[] evds = {l.a().recvEvd, l.a().reqEvd, l.a().connEvd};
        int[] queued = new int[evds.length];
        for (int i = 0; i < evds.length; i++) {
            queued[i] = evds[i].count();
        }
        stall.release();
        LocalMemoryRegion src = l.b().lmr(256, (byte) 7);
        for (int i = 0; i < 2; i++) {
            Checks.attempt("a send from the peer", () -> l.epB().postSend(List.of(Link.local(src, 0, 256)), 9,
                    Dat.COMPLETION_DEFAULT));
        }
        Checks.attempt("the peer's disconnect", () -> l.epB().disconnect(CloseFlag.ABRUPT));
        Events.drainFor(l.b().connEvd, rig.grace().multipliedBy(2));
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < evds.length; i++) {
            List<DatEvent> events = Events.drainNow(evds[i]);
            Checks.check(events.size() <= queued[i], "EVD " + i + " held " + queued[i] + " events when free returned"
                    + " and " + events.size() + " later: an event was added after free ("
                    + (events.isEmpty() ? "" : Events.describe(events.getLast())) + ")");
            for (DatEvent e : events) {
                if (e instanceof DatEvent.DtoCompletion d) {
                    Checks.check(posted.contains(d.cookie()), "completion of a cookie never posted: " + Events.describe(e));
                    Checks.check(seen.add(d.cookie()), "cookie " + d.cookie() + " completed twice");
                }
            }
        }
    }

    @Conformance("FREE_07")
    public void freeSucceedsOnceReservedOrPendingStatesAreLeft(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        Endpoint reserved = b.ep();
        ReservedServicePoint rsp = b.ia.createRsp(rig.connQual(), reserved, b.crEvd);
        rsp.free();
        freeIn(reserved, EpState.UNCONNECTED);
        Endpoint passive = b.ep();
        long q = rig.connQual();
        b.ia.createRsp(q, passive, b.crEvd);
        Endpoint epA = a.ep();
        var cr = b.connectHere(epA, q, NONE, "at the RSP");
        Checks.state(passive, EpState.PASSIVE_CONNECTION_PENDING, "the reserved EP with a request");
        cr.request().reject(NONE);
        freeIn(passive, EpState.UNCONNECTED);
        var tcr = tentative(rig, a, b);
        if (tcr == null) {
            throw new Skip("RESERVED and PASSIVE_CONNECTION_PENDING pass; TENTATIVE_CONNECTION_PENDING cannot be"
                    + " produced: the provider creates no EPs at PSPs");
        }
        Endpoint tentative = tcr.request().query().localEp();
        ConnectionRequest request = tcr.request();
        request.reject(NONE);
        DatException e = Checks.attempt("dat_ep_free of a rejected provider-created EP", tentative::free);
        if (e != null) {
            Checks.equal(DatReturnType.INVALID_HANDLE, e.type(), "dat_ep_free of a provider-created EP destroyed"
                    + " by reject");
        }
        isFreed(tentative, "after reject of its request");
    }
}
