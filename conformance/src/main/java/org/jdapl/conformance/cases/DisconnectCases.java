package org.jdapl.conformance.cases;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdapl.conformance.Conformance;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.VaType;

/**
 * The cases of dat_ep_disconnect and the NetworkDirect disconnect scheme up to the end of a connection
 * (DISC_01 to DISC_12); what holds once it has ended is {@link EndedConnectionCases}.
 */
public final class DisconnectCases {
    private static final byte[] NONE = new byte[0];
    static final byte FILL = (byte) 0xA5;

    /** Posts {@code n} receives of 256 bytes on {@code ep}, cookies {@code base..base+n-1}. */
    static List<Long> postReceives(Side side, Endpoint ep, int n, long base) {
        LocalMemoryRegion lmr = side.lmr(256L * n, FILL);
        List<Long> cookies = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ep.postRecv(List.of(Link.local(lmr, 256L * i, 256)), base + i, Dat.COMPLETION_DEFAULT);
            cookies.add(base + i);
        }
        return cookies;
    }

    /**
     * The peer (side B) of a connection that ended under it: one DISCONNECTED or BROKEN event, the EP
     * DISCONNECTED, and its receives {@code recvs} flushed.
     */
    static void peerEnded(Rig rig, Link l, List<Long> recvs, String what) {
        Events.connectionOneOf(l.b().connEvd, Set.of(EventNumber.CONNECTION_DISCONNECTED,
                EventNumber.CONNECTION_BROKEN), l.epB(), rig.eventTimeout(), "at the peer of " + what);
        Checks.state(l.epB(), EpState.DISCONNECTED, "the peer of " + what);
        Events.allStatus(Events.completions(l.b().recvEvd, recvs, rig, "of the peer's receives"), DtoStatus.FLUSHED,
                "the peer's receives at " + what);
    }

    /** Waits for the one connection event {@code number} of {@code ep} and checks the EP ends DISCONNECTED. */
    static void ended(Side side, Endpoint ep, EventNumber number, String what) {
        Events.connection(ep.query().connectEvd(), number, ep, side.rig.eventTimeout(), what);
        Checks.state(ep, EpState.DISCONNECTED, what);
    }

    @Conformance("DISC_01")
    public void abruptIsDefaultAndMissingFlagIsInvalid(Rig rig) {
        Checks.equal(CloseFlag.ABRUPT, Dat.CLOSE_DEFAULT, "DAT_CLOSE_DEFAULT");
        Link l = Link.open(rig);
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "disconnect without a flag", () -> l.epA().disconnect(null));
        Checks.state(l.epA(), EpState.CONNECTED, "after a refused disconnect");
        Events.none(l.a().connEvd, rig.grace(), "after a refused disconnect");
        Stall stall = Stall.start(l);
        l.epA().disconnect(Dat.CLOSE_DEFAULT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after a default disconnect with requests in progress");
        var got = Events.completions(l.a().reqEvd, stall.cookies(), rig, "of requests stalled at a default disconnect");
        Events.allStatus(got, DtoStatus.FLUSHED, "requests stalled at a default (abrupt) disconnect");
    }

    @Conformance("DISC_02")
    public void abruptFlushesEveryOutstandingDtoAndBindOnce(Rig rig) {
        Link l = Link.open(rig);
        List<Long> recvs = postReceives(l.a(), l.epA(), 8, 100);
        Stall stall = Stall.start(l);
        Set<Long> requests = new HashSet<>(stall.cookies());
        RemoteMemoryRegion rmr = rmrOrNull(l.a(), rig);
        if (rmr != null) {
            LocalMemoryRegion lmr = l.a().lmr(4096, FILL);
            rmr.bind(lmr, 0, 4096, Dat.MEM_PRIV_ALL, VaType.VA, l.epA(), 500, Dat.COMPLETION_DEFAULT);
            requests.add(500L);
        }
        l.epA().disconnect(CloseFlag.ABRUPT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after an abrupt disconnect");
        var r = Events.completions(l.a().recvEvd, recvs, rig, "of outstanding receives");
        Events.allStatus(r, DtoStatus.FLUSHED, "outstanding receives at an abrupt disconnect");
        List<DatEvent> req = Events.gather(l.a().reqEvd, requests, null, null, rig.eventTimeout(),
                "of requests and binds at an abrupt disconnect");
        Events.none(l.a().reqEvd, rig.grace(), "after every request completed");
        for (DatEvent e : req) {
            long cookie = Events.cookie(e);
            DtoStatus status = Events.status(e);
            if (cookie == 500L) {
                Checks.oneOf(Set.of(DtoStatus.SUCCESS, DtoStatus.FLUSHED), status, "the RMR bind posted before the"
                        + " abrupt disconnect (in progress: success or flushed)");
            } else if (stall.held()) {
                Checks.equal(DtoStatus.FLUSHED, status, "request " + cookie + " held at an abrupt disconnect");
            } else {
                Checks.equal(DtoStatus.FLUSHED, status, "send " + cookie + " outstanding at an abrupt disconnect");
            }
        }
        stall.release();
        Events.none(l.a().reqEvd, rig.grace(), "after the stall was lifted");
        stall.verifyUntouched();
        if (rmr == null) {
            rig.note("RMR binds not covered: the provider has no RMRs");
        }
    }

    static RemoteMemoryRegion rmrOrNull(Side side, Rig rig) {
        try {
            return side.pz.createRmr();
        } catch (DatException e) {
            if (e.type() == DatReturnType.MODEL_NOT_SUPPORTED) {
                return null;
            }
            throw e;
        }
    }

    @Conformance("DISC_03")
    public void abruptNoSuccessAfterFailurePerDirection(Rig rig) {
        // Both directions hold completed DTOs followed by ones still in progress when the abrupt
        // disconnect comes: sends past the peer's posted receives wait for a receive, and receives
        // past the peer's sends wait for data.
        int matched = 8;
        int size = 4096;
        Link l = Link.open(rig);
        LocalMemoryRegion srcA = l.a().lmr(size, (byte) 1);
        LocalMemoryRegion srcB = l.b().lmr(size, (byte) 2);
        LocalMemoryRegion sinkA = l.a().lmr((long) size * 2 * matched, FILL);
        LocalMemoryRegion sinkB = l.b().lmr((long) size * matched, FILL);
        List<Long> sends = new ArrayList<>();
        List<Long> recvs = new ArrayList<>();
        List<Long> peerRecvs = new ArrayList<>();
        List<Long> peerSends = new ArrayList<>();
        for (int i = 0; i < matched; i++) {
            l.epB().postRecv(List.of(Link.local(sinkB, (long) size * i, size)), 10_000 + i, Dat.COMPLETION_DEFAULT);
            peerRecvs.add(10_000L + i);
        }
        for (int i = 0; i < 2 * matched; i++) {
            l.epA().postRecv(List.of(Link.local(sinkA, (long) size * i, size)), 20_000 + i, Dat.COMPLETION_DEFAULT);
            recvs.add(20_000L + i);
        }
        for (int i = 0; i < matched; i++) {
            l.epB().postSend(List.of(Link.local(srcB, 0, size)), 30_000 + i, Dat.COMPLETION_DEFAULT);
            peerSends.add(30_000L + i);
        }
        for (int i = 0; i < 2 * matched; i++) {
            l.epA().postSend(List.of(Link.local(srcA, 0, size)), 40_000 + i, Dat.COMPLETION_DEFAULT);
            sends.add(40_000L + i);
        }
        Events.allStatus(Events.collect(l.b().recvEvd, peerRecvs, rig.eventTimeout(), "of the peer's receives"),
                DtoStatus.SUCCESS, "the peer's receives");
        Events.allStatus(Events.collect(l.b().reqEvd, peerSends, rig.eventTimeout(), "of the peer's sends"),
                DtoStatus.SUCCESS, "the peer's sends");
        // A send is done when its completion is out, not when the peer has the data: the sender may
        // not yet know of the delivery, and then an abrupt disconnect rightly flushes it. So the
        // matched DTOs' own completions come first; the rest are in progress at the disconnect.
        Map<Long, DatEvent.DtoCompletion> out = new LinkedHashMap<>(Events.collect(l.a().reqEvd,
                sends.subList(0, matched), rig.eventTimeout(), "of the sends matched by receives"));
        Map<Long, DatEvent.DtoCompletion> in = new LinkedHashMap<>(Events.collect(l.a().recvEvd,
                recvs.subList(0, matched), rig.eventTimeout(), "of the receives matched by sends"));
        l.epA().disconnect(CloseFlag.ABRUPT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after an abrupt disconnect");
        out.putAll(Events.completions(l.a().reqEvd, sends.subList(matched, 2 * matched), rig, "of the sends"));
        in.putAll(Events.completions(l.a().recvEvd, recvs.subList(matched, 2 * matched), rig, "of the receives"));
        Checks.check(ordered(out, "request direction"), "no send failed though " + matched
                + " of them had no receive at the peer");
        Checks.check(ordered(in, "receive direction"), "no receive failed though " + matched
                + " of them had no data from the peer");
        for (int i = 0; i < matched; i++) {
            Checks.equal(DtoStatus.SUCCESS, out.get(40_000L + i).status(), "send " + i + " matched by a receive");
            Checks.equal(DtoStatus.SUCCESS, in.get(20_000L + i).status(), "receive " + i + " matched by a send");
            Checks.equal(DtoStatus.FLUSHED, in.get(20_000L + matched + i).status(),
                    "receive " + (matched + i) + " outstanding at the abrupt disconnect");
        }
        racingBursts(rig);
    }

    /** Sends and receives racing an abrupt disconnect: whatever the split, no success after a failure. */
    private static void racingBursts(Rig rig) {
        int n = 64;
        int size = 16 * 1024;
        Link l = Link.open(rig);
        LocalMemoryRegion srcA = l.a().lmr(size, (byte) 1);
        LocalMemoryRegion srcB = l.b().lmr(size, (byte) 2);
        LocalMemoryRegion sinkA = l.a().lmr((long) size * n, FILL);
        LocalMemoryRegion sinkB = l.b().lmr((long) size * n, FILL);
        List<Long> sends = new ArrayList<>();
        List<Long> recvs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.epB().postRecv(List.of(Link.local(sinkB, (long) size * i, size)), 10_000 + i, Dat.COMPLETION_DEFAULT);
            l.epA().postRecv(List.of(Link.local(sinkA, (long) size * i, size)), 20_000 + i, Dat.COMPLETION_DEFAULT);
            recvs.add(20_000L + i);
        }
        for (int i = 0; i < n; i++) {
            l.epB().postSend(List.of(Link.local(srcB, 0, size)), 30_000 + i, Dat.COMPLETION_DEFAULT);
            l.epA().postSend(List.of(Link.local(srcA, 0, size)), 40_000 + i, Dat.COMPLETION_DEFAULT);
            sends.add(40_000L + i);
        }
        l.epA().disconnect(CloseFlag.ABRUPT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after an abrupt disconnect racing transfers");
        ordered(Events.completions(l.a().reqEvd, sends, rig, "of sends racing the disconnect"),
                "request direction racing the disconnect");
        ordered(Events.completions(l.a().recvEvd, recvs, rig, "of receives racing the disconnect"),
                "receive direction racing the disconnect");
    }

    /** Checks posting order and no success after a failure; returns whether a failure was seen. */
    private static boolean ordered(Map<Long, DatEvent.DtoCompletion> got, String direction) {
        boolean failed = false;
        long last = Long.MIN_VALUE;
        for (DatEvent.DtoCompletion d : got.values()) {
            Checks.check(d.cookie() > last, direction + ": cookie " + d.cookie() + " completed after " + last
                    + " though posted before it");
            last = d.cookie();
            if (d.status() != DtoStatus.SUCCESS) {
                failed = true;
            } else {
                Checks.check(!failed, direction + ": cookie " + d.cookie()
                        + " completed SUCCESS after an earlier DTO of the direction failed");
            }
        }
        return failed;
    }

    @Conformance("DISC_04")
    public void gracefulCompletesRequestsFirstWhileDisconnectPending(Rig rig) {
        Link l = Link.open(rig);
        Stall stall = Stall.start(l);
        l.epA().disconnect(CloseFlag.GRACEFUL);
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "right after a graceful disconnect with requests in progress");
        Events.none(l.a().connEvd, rig.grace(), "while requests are in progress after a graceful disconnect");
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "while requests are in progress");
        stall.release();
        var got = Events.completions(l.a().reqEvd, stall.cookies(), rig, "of requests at a graceful disconnect");
        Events.allStatus(got, DtoStatus.SUCCESS, "requests in progress at a graceful disconnect");
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after the graceful disconnect");
        stall.verifyDelivered(l.b().recvEvd);
        ended(l.b(), l.epB(), EventNumber.CONNECTION_DISCONNECTED, "at the peer after the graceful disconnect");
        Events.none(l.a().connEvd, rig.grace(), "after DISCONNECTED");
        if (!stall.held()) {
            rig.note("covered with a send waiting for the peer's receive (no transfer hold)");
        }
    }

    @Conformance("DISC_05")
    public void abruptWhileDisconnectPendingDoesNotWait(Rig rig) {
        Link l = Link.open(rig);
        Stall stall = Stall.start(l);
        l.epA().disconnect(CloseFlag.GRACEFUL);
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "after a graceful disconnect with requests in progress");
        l.epA().disconnect(CloseFlag.ABRUPT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after an abrupt disconnect in DISCONNECT_PENDING");
        var got = Events.completions(l.a().reqEvd, stall.cookies(), rig, "of the stalled requests");
        Events.allStatus(got, DtoStatus.FLUSHED, "requests outstanding at the abrupt disconnect");
        stall.release();
        Duration grace = rig.grace();
        for (DatEvent e : Events.drainFor(l.b().recvEvd, grace)) {
            Checks.check(Events.status(e) != DtoStatus.SUCCESS, "the peer's receive completed SUCCESS with data"
                    + " of a flushed send: " + Events.describe(e));
        }
        stall.verifyUntouched();
        Events.none(l.a().connEvd, grace, "after DISCONNECTED");
    }

    @Conformance("DISC_06")
    public void gracefulWhileDisconnectPendingHasNoEffect(Rig rig) {
        Link l = Link.open(rig);
        Stall stall = Stall.start(l);
        l.epA().disconnect(CloseFlag.GRACEFUL);
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "after a graceful disconnect with requests in progress");
        Checks.succeeds("a second graceful disconnect in DISCONNECT_PENDING",
                () -> l.epA().disconnect(CloseFlag.GRACEFUL));
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "after the second graceful disconnect");
        Events.none(l.a().connEvd, rig.grace(), "after the second graceful disconnect");
        Events.none(l.a().reqEvd, Duration.ofMillis(1), "after the second graceful disconnect");
        stall.release();
        var got = Events.completions(l.a().reqEvd, stall.cookies(), rig, "of the stalled requests");
        Events.allStatus(got, DtoStatus.SUCCESS, "requests at a graceful disconnect");
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after the graceful disconnect");
        Events.none(l.a().connEvd, rig.grace(), "after the one DISCONNECTED event");
        stall.verifyDelivered(l.b().recvEvd);
    }

    @Conformance("DISC_07")
    public void postsInDisconnectPendingFailInvalidState(Rig rig) {
        Link l = Link.open(rig);
        LocalMemoryRegion local = l.a().lmr(1024, (byte) 3);
        LocalMemoryRegion remote = l.b().lmr(1024, FILL);
        RemoteMemoryRegion rmr = rmrOrNull(l.a(), rig);
        Stall stall = Stall.start(l);
        l.epA().disconnect(CloseFlag.GRACEFUL);
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "after a graceful disconnect with requests in progress");
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_ep_post_send in DISCONNECT_PENDING",
                () -> l.epA().postSend(List.of(Link.local(local, 0, 64)), 1, Dat.COMPLETION_DEFAULT));
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_ep_post_rdma_read in DISCONNECT_PENDING",
                () -> l.epA().postRdmaRead(List.of(Link.local(local, 0, 64)), 2, Link.remote(remote, 0, 64),
                        Dat.COMPLETION_DEFAULT));
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_ep_post_rdma_write in DISCONNECT_PENDING",
                () -> l.epA().postRdmaWrite(List.of(Link.local(local, 0, 64)), 3, Link.remote(remote, 0, 64),
                        Dat.COMPLETION_DEFAULT));
        if (rmr != null) {
            Checks.fails(DatReturnType.INVALID_STATE, null, "dat_rmr_bind in DISCONNECT_PENDING",
                    () -> rmr.bind(local, 0, 64, Dat.MEM_PRIV_ALL, VaType.VA, l.epA(), 4, Dat.COMPLETION_DEFAULT));
        } else {
            rig.note("RMR bind not covered: the provider has no RMRs");
        }
        Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "after the refused posts");
        Events.none(l.a().reqEvd, rig.grace(), "after refused posts");
        stall.release();
        var got = Events.completions(l.a().reqEvd, stall.cookies(), rig, "of the stalled requests only");
        Events.allStatus(got, DtoStatus.SUCCESS, "requests at a graceful disconnect");
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after the graceful disconnect");
        Bytes.all(remote.segment(), FILL, "the target of the refused RDMA Write");
    }

    @Conformance("DISC_08")
    public void completionIsDisconnectedEventThenStateDisconnected(Rig rig) {
        for (CloseFlag flag : CloseFlag.values()) {
            Link l = Link.open(rig);
            l.epA().disconnect(flag);
            ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after a " + flag + " disconnect");
            Events.none(l.a().connEvd, rig.grace(), "after DISCONNECTED");
            Link p = Link.open(rig);
            p.epB().disconnect(flag);
            ended(p.b(), p.epB(), EventNumber.CONNECTION_DISCONNECTED, "after a " + flag + " disconnect by the passive side");
            Events.none(p.b().connEvd, rig.grace(), "after DISCONNECTED");
        }
    }

    @Conformance("DISC_09")
    public void sharedEvdDeliversSuccessesBeforeDisconnected(Rig rig) {
        Side[] probe = rig.pair();
        if (!probe[0].ia.query().provider().evdStreamMergingSupported()) {
            throw new Skip("the provider does not support one EVD for connection and DTO events");
        }
        for (CloseFlag flag : CloseFlag.values()) {
            Side[] s = rig.pair();
            EventDispatcher shared = s[0].evd(EvdFlag.DTO, EvdFlag.CONNECTION, EvdFlag.RMR_BIND);
            Link l = Link.connect(s[0], s[1], s[0].ep(shared), s[1].ep());
            Set<Long> cookies = new HashSet<>(postReceives(l.a(), l.epA(), 4, 700));
            List<Long> successes;
            if (flag == CloseFlag.GRACEFUL) {
                Stall stall = Stall.start(l);
                cookies.addAll(stall.cookies());
                successes = stall.cookies();
                l.epA().disconnect(flag);
                stall.release();
            } else {
                LocalMemoryRegion src = l.a().lmr(8192, (byte) 4);
                LocalMemoryRegion sink = l.b().lmr(8192L * 64, FILL);
                for (int i = 0; i < 64; i++) {
                    l.epB().postRecv(List.of(Link.local(sink, 8192L * i, 8192)), i, Dat.COMPLETION_DEFAULT);
                }
                for (int i = 0; i < 64; i++) {
                    l.epA().postSend(List.of(Link.local(src, 0, 8192)), 800 + i, Dat.COMPLETION_DEFAULT);
                    cookies.add(800L + i);
                }
                l.epA().disconnect(flag);
                successes = List.of();
            }
            List<DatEvent> events = Events.gather(shared, cookies, EventNumber.CONNECTION_DISCONNECTED, l.epA(),
                    rig.eventTimeout(), "on the shared EVD after a " + flag + " disconnect");
            Events.none(shared, rig.grace(), "on the shared EVD after everything completed");
            boolean disconnected = false;
            for (DatEvent e : events) {
                if (e instanceof DatEvent.Connection) {
                    disconnected = true;
                } else if (Events.status(e) == DtoStatus.SUCCESS) {
                    Checks.check(!disconnected, "a successful completion was dequeued after DISCONNECTED ("
                            + flag + "): " + Events.describe(e));
                }
                if (!(e instanceof DatEvent.Connection) && successes.contains(Events.cookie(e))) {
                    Checks.equal(DtoStatus.SUCCESS, Events.status(e), "request " + Events.cookie(e)
                            + " in progress at a graceful disconnect");
                }
            }
        }
    }

    @Conformance("DISC_10")
    public void disconnectOfDisconnectedEpIsNoOp(Rig rig) {
        Link l = Link.open(rig);
        l.epA().disconnect(CloseFlag.ABRUPT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after the first disconnect");
        Checks.succeeds("an abrupt disconnect of a DISCONNECTED EP", () -> l.epA().disconnect(CloseFlag.ABRUPT));
        Checks.succeeds("a graceful disconnect of a DISCONNECTED EP", () -> l.epA().disconnect(CloseFlag.GRACEFUL));
        Checks.state(l.epA(), EpState.DISCONNECTED, "after repeated disconnects");
        ended(l.b(), l.epB(), EventNumber.CONNECTION_DISCONNECTED, "at the peer");
        Checks.succeeds("a graceful disconnect of the peer's DISCONNECTED EP",
                () -> l.epB().disconnect(CloseFlag.GRACEFUL));
        Checks.succeeds("an abrupt disconnect of the peer's DISCONNECTED EP",
                () -> l.epB().disconnect(CloseFlag.ABRUPT));
        Checks.state(l.epB(), EpState.DISCONNECTED, "the peer after repeated disconnects");
        Events.none(l.a().connEvd, rig.grace(), "after disconnects of a DISCONNECTED EP");
        Events.none(l.b().connEvd, Duration.ofMillis(1), "after disconnects of a DISCONNECTED EP");
    }

    @Conformance("DISC_11")
    public void disconnectBeforeConnectingFailsInvalidState(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        Endpoint unconnected = a.ep();
        refused(unconnected, EpState.UNCONNECTED);
        Endpoint reserved = b.ep();
        long q = rig.connQual();
        ReservedServicePoint rsp = b.ia.createRsp(q, reserved, b.crEvd);
        refused(reserved, EpState.RESERVED);
        Endpoint epA = a.ep();
        var cr = b.connectHere(epA, q, NONE, "at the RSP");
        Checks.state(reserved, EpState.PASSIVE_CONNECTION_PENDING, "the reserved EP after a request arrived");
        refused(reserved, EpState.PASSIVE_CONNECTION_PENDING);
        cr.request().reject(NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_PEER_REJECTED, epA, rig.eventTimeout(), "after reject");
        Checks.check(rsp.isFreed(), "the RSP is not destroyed by the arrival of its request");
        long q2 = rig.connQual();
        PublicServicePoint psp;
        try {
            psp = b.ia.createPsp(q2, b.crEvd, PspFlag.PROVIDER);
        } catch (DatException e) {
            if (e.type() == DatReturnType.MODEL_NOT_SUPPORTED && !b.ia.query().provider().pspCreatesEp()) {
                Events.none(b.connEvd, rig.grace(), "after refused disconnects");
                throw new Skip("UNCONNECTED, RESERVED and PASSIVE_CONNECTION_PENDING pass; TENTATIVE_CONNECTION_PENDING"
                        + " cannot be produced: the provider creates no EPs at PSPs");
            }
            throw e;
        }
        Endpoint epA2 = a.ep();
        var cr2 = b.connectHere(epA2, q2, NONE, "at the provider PSP");
        Endpoint tentative = cr2.request().query().localEp();
        Checks.check(tentative != null, "a request at a PROVIDER PSP names no provider-created EP");
        Checks.state(tentative, EpState.TENTATIVE_CONNECTION_PENDING, "the provider-created EP");
        refused(tentative, EpState.TENTATIVE_CONNECTION_PENDING);
        cr2.request().reject(NONE);
        psp.free();
        Events.connection(a.connEvd, EventNumber.CONNECTION_PEER_REJECTED, epA2, rig.eventTimeout(), "after reject");
        Events.none(b.connEvd, rig.grace(), "after refused disconnects");
    }

    private static void refused(Endpoint ep, EpState state) {
        for (CloseFlag flag : CloseFlag.values()) {
            Checks.fails(DatReturnType.INVALID_STATE, null, flag + " disconnect in " + state,
                    () -> ep.disconnect(flag));
            Checks.state(ep, state, "after a refused " + flag + " disconnect");
        }
    }

    @Conformance("DISC_12")
    public void disconnectDuringEstablishmentAbortsAndFlushesReceives(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        b.psp(q);
        long base = 100;
        for (CloseFlag flag : CloseFlag.values()) {
            Endpoint epA = a.ep();
            List<Long> recvs = postReceives(a, epA, 4, base);
            base += 100;
            var cr = b.connectHere(epA, q, NONE, "at the passive side");
            Checks.state(epA, EpState.ACTIVE_CONNECTION_PENDING, "before the disconnect");
            epA.disconnect(flag);
            ended(a, epA, EventNumber.CONNECTION_DISCONNECTED, "after a " + flag + " disconnect in ACTIVE_CONNECTION_PENDING");
            var got = Events.completions(a.recvEvd, recvs, rig, "of receives posted before connect");
            Events.allStatus(got, DtoStatus.FLUSHED, "receives at an aborted establishment");
            Connecting.lateAcceptFails(b, cr.request(), "after the active side aborted with a " + flag + " disconnect");
            Events.none(a.connEvd, rig.grace(), "after the aborted establishment");
            Checks.state(epA, EpState.DISCONNECTED, "after the late accept");
        }
        rig.note("COMPLETION_PENDING not produced (the API offers no way to hold the passive side in it)");
    }
}
