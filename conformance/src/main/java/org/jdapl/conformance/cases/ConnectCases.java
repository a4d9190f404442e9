package org.jdapl.conformance.cases;

import static org.jdapl.conformance.ConformanceFixture.PrivateDataCarrier.ACCEPT;
import static org.jdapl.conformance.ConformanceFixture.PrivateDataCarrier.CONNECT;
import static org.jdapl.conformance.ConformanceFixture.PrivateDataCarrier.REJECT;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jdapl.conformance.Conformance;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.Qos;
import org.jdapl.dat.ReservedServicePoint;

/** The cases of dat_ep_connect (CONN_*). */
public final class ConnectCases {
    private static final byte[] NONE = new byte[0];

    @Conformance("CONN_01")
    public void connectOnEpNotUnconnectedFailsInvalidState(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        PublicServicePoint psp = b.psp(q);
        Endpoint ep = a.ep();
        ep.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE);
        Checks.state(ep, EpState.ACTIVE_CONNECTION_PENDING, "after connect");
        Checks.fails(DatReturnType.INVALID_STATE, DatReturnSubtype.INVALID_STATE_EP_ACTCONNPENDING,
                "connect in ACTIVE_CONNECTION_PENDING",
                () -> ep.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE));
        Checks.state(ep, EpState.ACTIVE_CONNECTION_PENDING, "after the refused second connect");
        DatEvent.ConnectionRequest cr = Events.request(b.crEvd, rig.eventTimeout(), "of the first connect");
        Events.none(b.crEvd, rig.grace(), "after a refused second connect");
        Endpoint epB = b.ep();
        cr.request().accept(epB, NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_ESTABLISHED, ep, rig.eventTimeout(), "at the active side");
        Events.connection(b.connEvd, EventNumber.CONNECTION_ESTABLISHED, epB, rig.eventTimeout(), "at the passive side");
        Checks.fails(DatReturnType.INVALID_STATE, DatReturnSubtype.INVALID_STATE_EP_CONNECTED, "connect in CONNECTED",
                () -> ep.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE));
        Checks.state(ep, EpState.CONNECTED, "after connect was refused in CONNECTED");
        Events.none(a.connEvd, rig.grace(), "after connect was refused in CONNECTED");
        ep.disconnect(CloseFlag.ABRUPT);
        Events.connection(a.connEvd, EventNumber.CONNECTION_DISCONNECTED, ep, rig.eventTimeout(), "after disconnect");
        Checks.fails(DatReturnType.INVALID_STATE, DatReturnSubtype.INVALID_STATE_EP_DISCONNECTED,
                "connect in DISCONNECTED", () -> ep.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE));
        Checks.state(ep, EpState.DISCONNECTED, "after connect was refused in DISCONNECTED");
        Endpoint reserved = a.ep();
        ReservedServicePoint rsp = a.ia.createRsp(rig.connQual(), reserved, a.crEvd);
        Checks.state(reserved, EpState.RESERVED, "after dat_rsp_create");
        Checks.fails(DatReturnType.INVALID_STATE, DatReturnSubtype.INVALID_STATE_EP_RESERVED, "connect in RESERVED",
                () -> reserved.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE));
        Checks.state(reserved, EpState.RESERVED, "after connect was refused in RESERVED");
        rsp.free();
        psp.free();
        Events.none(a.connEvd, rig.grace(), "after the refused connects");
        Events.none(b.crEvd, Duration.ofMillis(1), "after the refused connects");
    }

    @Conformance("CONN_02")
    public void successfulConnectIsActivePendingWithLocalPortQualifier(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        b.psp(q);
        Endpoint ep1 = a.ep();
        Endpoint ep2 = a.ep();
        Checks.state(ep1, EpState.UNCONNECTED, "a new EP");
        ep1.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE);
        Checks.state(ep1, EpState.ACTIVE_CONNECTION_PENDING, "after a successful connect");
        ep2.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE);
        Checks.state(ep2, EpState.ACTIVE_CONNECTION_PENDING, "after a successful connect");
        long port1 = ep1.query().localPortQual();
        long port2 = ep2.query().localPortQual();
        Checks.check(port1 != 0 && port2 != 0, "connect bound no local port qualifier: " + port1 + ", " + port2);
        Checks.check(port1 != port2, "two connecting EPs of one IA share the port qualifier " + port1);
        var cr1 = Events.request(b.crEvd, rig.eventTimeout(), "of the first connect");
        var cr2 = Events.request(b.crEvd, rig.eventTimeout(), "of the second connect");
        Checks.equal(Set.of(port1, port2), Set.of(cr1.request().query().remotePortQual(),
                cr2.request().query().remotePortQual()), "the port qualifiers the requests show");
        Checks.state(ep1, EpState.ACTIVE_CONNECTION_PENDING, "while the request is unanswered");
        Events.none(a.connEvd, rig.grace(), "while the requests are unanswered");
    }

    @Conformance("CONN_03")
    public void remoteAcceptEstablishesBothSides(Rig rig) {
        Pending p = Pending.open(rig);
        Side a = p.a();
        Side b = p.b();
        Endpoint epA = p.epA();
        Endpoint epB = b.ep();
        var cr = p.cr();
        Checks.state(epB, EpState.UNCONNECTED, "the passive EP before accept");
        cr.request().accept(epB, NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_ESTABLISHED, epA, rig.eventTimeout(), "at the active side");
        Checks.state(epA, EpState.CONNECTED, "the active EP after ESTABLISHED");
        Events.connection(b.connEvd, EventNumber.CONNECTION_ESTABLISHED, epB, rig.eventTimeout(), "at the passive side");
        Checks.state(epB, EpState.CONNECTED, "the passive EP after ESTABLISHED");
        Events.none(a.connEvd, rig.grace(), "at the active side after ESTABLISHED");
        Events.none(b.connEvd, Duration.ofMillis(1), "at the passive side after ESTABLISHED");
        Events.none(a.crEvd, Duration.ofMillis(1), "on the active side's CR EVD");
    }

    @Conformance("CONN_04")
    public void peerRejectIsReportedAndEpDisconnected(Rig rig) {
        Pending p = Pending.open(rig);
        Side a = p.a();
        Side b = p.b();
        Endpoint epA = p.epA();
        var cr = p.cr();
        cr.request().reject(NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_PEER_REJECTED, epA, rig.eventTimeout(), "after reject");
        Checks.state(epA, EpState.DISCONNECTED, "the active EP after PEER_REJECTED");
        Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_CR, "dat_cr_query after reject",
                () -> cr.request().query());
        Events.none(a.connEvd, rig.grace(), "after PEER_REJECTED");
        Events.none(b.connEvd, Duration.ofMillis(1), "at the passive side after its reject");
    }

    @Conformance("CONN_05")
    public void nobodyListeningIsNonPeerRejected(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        b.psp(rig.connQual());
        Endpoint epA = a.ep();
        epA.connect(b.address(), rig.connQual(), rig.longConnectTimeoutMicros(), NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_NON_PEER_REJECTED, epA, rig.eventTimeout(),
                "for a qualifier nobody listens on");
        Checks.state(epA, EpState.DISCONNECTED, "after NON_PEER_REJECTED");
        Events.none(a.connEvd, rig.grace(), "after NON_PEER_REJECTED");
        Events.none(b.crEvd, Duration.ofMillis(1), "at the passive side's PSP on another qualifier");
        backlog(rig);
    }

    /** Unanswered requests past a PSP's backlog are NON_PEER_REJECTED; those within it stay pending. */
    private static void backlog(Rig rig) {
        int tries = 300;
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        EventDispatcher conn = a.ia.createEvd(1024, null, EnumSet.of(EvdFlag.CONNECTION));
        EventDispatcher crs = b.ia.createEvd(1024, null, EnumSet.of(EvdFlag.CR));
        long q = rig.connQual();
        b.ia.createPsp(q, crs, PspFlag.CONSUMER);
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < tries; i++) {
            Endpoint ep = a.ia.createEp(a.pz, a.recvEvd, a.reqEvd, conn, EpAttributes.defaults());
            ep.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE);
            eps.add(ep);
        }
        int requests = Events.drainFor(crs, rig.grace()).size();
        List<DatEvent> events = Events.drainFor(conn, rig.grace());
        if (events.isEmpty()) {
            Checks.equal(tries, requests, "connection requests delivered for " + tries + " connects");
            rig.note("no backlog limit reached with " + tries + " unanswered requests");
            return;
        }
        Set<Endpoint> rejected = new HashSet<>();
        for (DatEvent e : events) {
            Checks.check(e instanceof DatEvent.Connection c && c.number() == EventNumber.CONNECTION_NON_PEER_REJECTED
                    && rejected.add(c.ep()), "with the backlog full: expected one NON_PEER_REJECTED per refused EP but"
                    + " got " + Events.describe(e));
        }
        Checks.equal(tries, requests + rejected.size(), "requests delivered plus requests rejected");
        for (Endpoint ep : eps) {
            Checks.state(ep, rejected.contains(ep) ? EpState.DISCONNECTED : EpState.ACTIVE_CONNECTION_PENDING,
                    rejected.contains(ep) ? "an EP rejected for a full backlog" : "an EP whose request waits");
        }
        rig.note("backlog full after " + requests + " unanswered requests");
    }

    @Conformance("CONN_06")
    public void unreachableHostIsReportedUnreachable(Rig rig) {
        SocketAddress nowhere = rig.fixture().unreachableAddress();
        Side a = rig.pair()[0];
        Endpoint epA = a.ep();
        long timeout = rig.eventTimeout().toNanos() / 2000;
        epA.connect(nowhere, rig.connQual(), timeout, NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_UNREACHABLE, epA, rig.eventTimeout(),
                "for " + nowhere);
        Checks.state(epA, EpState.DISCONNECTED, "after UNREACHABLE");
        Events.none(a.connEvd, rig.grace(), "after UNREACHABLE");
    }

    @Conformance("CONN_07")
    public void unansweredRequestTimesOutAndLateAcceptFails(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        b.psp(q);
        Endpoint epA = a.ep();
        epA.connect(b.address(), q, rig.shortConnectTimeoutMicros(), NONE);
        var cr = Events.request(b.crEvd, rig.eventTimeout(), "before the connect times out");
        Events.connection(a.connEvd, EventNumber.CONNECTION_TIMED_OUT, epA,
                rig.eventTimeout().plus(rig.fixture().timing().connectTimeout()),
                "for a request the peer did not answer");
        Checks.state(epA, EpState.DISCONNECTED, "after TIMED_OUT");
        Connecting.lateAcceptFails(b, cr.request(), "after the active side timed out");
        Events.none(a.connEvd, rig.grace(), "at the active side after TIMED_OUT and the late accept");
        Checks.state(epA, EpState.DISCONNECTED, "the active EP after the late accept");
    }

    @Conformance("CONN_08")
    public void invalidAddressFailsSync(Rig rig) {
        List<SocketAddress> invalid = rig.fixture().invalidAddresses();
        if (invalid.isEmpty()) {
            throw new Skip("fixture " + rig.fixture().name() + " names no address the provider can tell is invalid");
        }
        Side a = rig.pair()[0];
        Endpoint ep = a.ep();
        for (SocketAddress address : invalid) {
            Checks.fails(DatReturnType.INVALID_ADDRESS, null, "connect to " + address,
                    () -> ep.connect(address, rig.connQual(), rig.longConnectTimeoutMicros(), NONE));
            Checks.state(ep, EpState.UNCONNECTED, "after connect to " + address + " failed");
        }
        Events.none(a.connEvd, rig.grace(), "after the refused connects");
    }

    @Conformance("CONN_09")
    public void unsupportedQosFailsModelNotSupported(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        Set<Qos> supported = a.ia.query().provider().qosSupported();
        EnumSet<Qos> unsupported = EnumSet.allOf(Qos.class);
        unsupported.removeAll(supported);
        if (unsupported.isEmpty()) {
            throw new Skip("the provider supports every QoS " + supported);
        }
        long q = rig.connQual();
        b.psp(q);
        Endpoint ep = a.ep();
        for (Qos qos : unsupported) {
            Checks.fails(DatReturnType.MODEL_NOT_SUPPORTED, null, "connect with QoS " + qos,
                    () -> ep.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE, qos, ConnectFlag.DEFAULT));
            Checks.state(ep, EpState.UNCONNECTED, "after connect with QoS " + qos + " failed");
        }
        Events.none(b.crEvd, rig.grace(), "at the peer after connects with unsupported QoS");
        Events.none(a.connEvd, Duration.ofMillis(1), "after connects with unsupported QoS");
    }

    @Conformance("CONN_10")
    public void privateDataArrivesIntactAndBadSizesOrTimeoutsFail(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        int max = a.ia.query().attributes().maxPrivateDataSize();
        Checks.check(max >= 0, "negative private data maximum " + max);
        long q = rig.connQual();
        b.psp(q);
        byte[] full = rig.randomBytes(max);
        Endpoint ep1 = a.ep();
        var cr1 = b.connectHere(ep1, q, full.clone(), "with " + max + " bytes of private data");
        Checks.check(!cr1.truncated(), "the request says its private data was truncated");
        Bytes.same(delivered(rig, CONNECT, full), cr1.request().query().privateData(),
                "the private data of the request");
        cr1.request().reject(NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_PEER_REJECTED, ep1, rig.eventTimeout(), "after reject");
        Endpoint ep2 = a.ep();
        var cr2 = b.connectHere(ep2, q, NONE, "without private data");
        Bytes.same(delivered(rig, CONNECT, NONE), cr2.request().query().privateData(),
                "the private data of a request without any");
        cr2.request().reject(NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_PEER_REJECTED, ep2, rig.eventTimeout(), "after reject");
        Endpoint ep3 = a.ep();
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "connect with " + (max + 1) + " bytes of private data",
                () -> ep3.connect(b.address(), q, rig.longConnectTimeoutMicros(), new byte[max + 1]));
        Checks.state(ep3, EpState.UNCONNECTED, "after a refused connect");
        for (long timeout : new long[] {0, -1, Long.MIN_VALUE}) {
            Checks.fails(DatReturnType.INVALID_PARAMETER, null, "connect with timeout " + timeout,
                    () -> ep3.connect(b.address(), q, timeout, NONE));
            Checks.state(ep3, EpState.UNCONNECTED, "after a refused connect");
        }
        Events.none(b.crEvd, rig.grace(), "after refused connects");
        ep3.connect(b.address(), q, Dat.TIMEOUT_INFINITE, NONE);
        var cr3 = Events.request(b.crEvd, rig.eventTimeout(), "with an infinite timeout");
        Endpoint epB = b.ep();
        cr3.request().accept(epB, NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_ESTABLISHED, ep3, rig.eventTimeout(),
                "with an infinite timeout");
        Events.none(a.connEvd, rig.grace(), "after the connects");
    }

    @Conformance("CONN_11")
    public void requestShowsActiveAddressAndPortQualifier(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        PublicServicePoint psp = b.psp(q);
        Endpoint epA = a.ep();
        epA.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE);
        long port = epA.query().localPortQual();
        var cr = Events.request(b.crEvd, rig.eventTimeout(), "at the passive side");
        ConnectionRequest.CrParam p = cr.request().query();
        Checks.equal(a.address(), p.remoteAddress(), "the request's remote IA address");
        Checks.equal(port, p.remotePortQual(), "the request's remote port qualifier");
        Checks.equal(q, cr.connQual(), "the connection qualifier of the request event");
        Checks.check(cr.servicePoint() == psp, "the request event names another service point");
    }

    @Conformance("CONN_12")
    public void freedOrForeignEpFailsInvalidHandle(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        b.psp(q);
        Endpoint freed = a.ep();
        freed.free();
        Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_EP, "connect of a freed EP",
                () -> freed.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE));
        Events.none(b.crEvd, rig.grace(), "after the connect of a freed EP");
        Endpoint epA = a.ep();
        var cr = b.connectHere(epA, q, NONE, "at the passive side");
        Endpoint freedB = b.ep();
        freedB.free();
        Checks.fails(DatReturnType.INVALID_HANDLE, null, "dat_cr_accept with a freed EP",
                () -> cr.request().accept(freedB, NONE));
        Endpoint foreign = Foreign.handle(Endpoint.class);
        Checks.fails(DatReturnType.INVALID_HANDLE, null, "dat_cr_accept with an EP no provider created",
                () -> cr.request().accept(foreign, NONE));
        Events.none(a.connEvd, rig.grace(), "after accepts with invalid EPs");
        Endpoint epB = b.ep();
        cr.request().accept(epB, NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_ESTABLISHED, epA, rig.eventTimeout(),
                "after the request survived accepts with invalid EPs");
    }

    @Conformance("CONN_13")
    public void acceptAndRejectPrivateDataReachActiveSide(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        int max = b.ia.query().attributes().maxPrivateDataSize();
        if (max == 0) {
            throw new Skip("the provider's private data maximum is 0");
        }
        long q = rig.connQual();
        b.psp(q);
        byte[] acceptData = rig.randomBytes(max);
        byte[] rejectData = rig.randomBytes(max);
        Endpoint ep1 = a.ep();
        var cr1 = b.connectHere(ep1, q, NONE, "of the first connect");
        cr1.request().accept(b.ep(), acceptData.clone());
        var est = Events.connection(a.connEvd, EventNumber.CONNECTION_ESTABLISHED, ep1, rig.eventTimeout(),
                "after accept with private data");
        Bytes.same(delivered(rig, ACCEPT, acceptData), est.privateData(), "the accept private data at the active side");
        Endpoint ep2 = a.ep();
        var cr2 = b.connectHere(ep2, q, NONE, "of the second connect");
        cr2.request().reject(rejectData.clone());
        var rej = Events.connection(a.connEvd, EventNumber.CONNECTION_PEER_REJECTED, ep2, rig.eventTimeout(),
                "after reject with private data");
        Bytes.same(delivered(rig, REJECT, rejectData), rej.privateData(), "the reject private data at the active side");
        Endpoint ep3 = a.ep();
        var cr3 = b.connectHere(ep3, q, NONE, "of the third connect");
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "dat_cr_reject with " + (max + 1) + " bytes",
                () -> cr3.request().reject(new byte[max + 1]));
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "dat_cr_accept with " + (max + 1) + " bytes",
                () -> cr3.request().accept(b.ep(), new byte[max + 1]));
        Events.none(a.connEvd, rig.grace(), "after refused answers");
    }

    /** What the remote consumer gets for {@code sent}, as the fixture says its provider delivers it (CONN_10, CONN_13). */
    private static byte[] delivered(Rig rig, ConformanceFixture.PrivateDataCarrier carrier, byte[] sent) {
        byte[] d = rig.fixture().deliveredPrivateData(carrier, sent.clone());
        for (int i = sent.length; i < d.length; i++) {
            Checks.check(d[i] == 0, "the fixture pads private data with byte " + d[i] + ", not zeros");
        }
        Checks.check(d.length >= sent.length, "the fixture says private data arrives shorter than sent");
        return d;
    }
}
