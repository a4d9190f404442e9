package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.Qos;
import org.jdapl.dat.ReservedServicePoint;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jdapl.provider.emu.faults.EmuFaults;

@Timeout(60)
class ConnectionTest {

    private static SocketAddress addressOf(Fixture.Side side) {
        return side.ia.query().attributes().address();
    }

    @Test
    void everyIaHasADistinctLoopbackAddressWithPortZero() {
        try (Fixture f = new Fixture()) {
            InetSocketAddress a = (InetSocketAddress) addressOf(f.a);
            InetSocketAddress b = (InetSocketAddress) addressOf(f.b);
            assertFalse(a.equals(b));
            assertEquals(0, a.getPort());
            assertEquals(127, a.getAddress().getAddress()[0]);
            assertEquals(77, a.getAddress().getAddress()[1]);
            assertEquals("emu-loopback:a", f.a.ia.query().attributes().adapterName());
        }
    }

    @Test
    void unreachableNoListenerAndInvalidAddresses() {
        try (Fixture f = new Fixture()) {
            Endpoint ep = f.a.ep();
            ep.connect(EmuFaults.unassignedLoopbackAddress(), 1, Fixture.WAIT, null);
            f.a.nextConnection(EventNumber.CONNECTION_UNREACHABLE);
            assertEquals(EpState.DISCONNECTED, ep.query().state());
            ep.reset();
            ep.connect(addressOf(f.b), 12345, Fixture.WAIT, null);
            f.a.nextConnection(EventNumber.CONNECTION_NON_PEER_REJECTED);
            ep.reset();
            for (SocketAddress bad : new SocketAddress[] {UnixDomainSocketAddress.of("/tmp/x"),
                    InetSocketAddress.createUnresolved("nowhere.invalid", 1), new InetSocketAddress("0.0.0.0", 0),
                    new InetSocketAddress("224.0.0.1", 0), new InetSocketAddress("255.255.255.255", 0)}) {
                DatException e = assertThrows(DatException.class, () -> ep.connect(bad, 1, Fixture.WAIT, null));
                assertEquals(DatReturnType.INVALID_ADDRESS, e.type(), bad.toString());
            }
            assertEquals(DatReturnType.MODEL_NOT_SUPPORTED, assertThrows(DatException.class, () -> ep.connect(
                    addressOf(f.b), 1, Fixture.WAIT, null, Qos.LOW_LATENCY, ConnectFlag.DEFAULT)).type());
            assertEquals(DatReturnType.MODEL_NOT_SUPPORTED, assertThrows(DatException.class, () -> ep.connect(
                    addressOf(f.b), 1, Fixture.WAIT, null, Qos.BEST_EFFORT, ConnectFlag.MULTIPATH_REQUESTED)).type());
            assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                    () -> ep.connect(addressOf(f.b), 1, 0, null)).type());
            assertEquals(EpState.UNCONNECTED, ep.query().state());
        }
    }

    @Test
    void requestNotAcceptedInTimeTimesOutAndALateAcceptFails() {
        try (Fixture f = new Fixture()) {
            Endpoint active = f.a.ep();
            Endpoint passive = f.b.ep();
            f.b.ia.createPsp(7, f.b.evd, PspFlag.CONSUMER);
            active.connect(addressOf(f.b), 7, 100_000, null);
            assertEquals(EpState.ACTIVE_CONNECTION_PENDING, active.query().state());
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, f.b.next());
            assertEquals(addressOf(f.a), cr.request().query().remoteAddress());
            assertEquals(active.query().localPortQual(), cr.request().query().remotePortQual());
            f.a.nextConnection(EventNumber.CONNECTION_TIMED_OUT);
            assertEquals(EpState.DISCONNECTED, active.query().state());
            cr.request().accept(passive, null);
            f.b.nextConnection(EventNumber.CONNECTION_ACCEPT_COMPLETION_ERROR);
            assertEquals(EpState.DISCONNECTED, passive.query().state());
            assertEquals(0, f.a.evd.count());
        }
    }

    @Test
    void reservedServicePointAndProviderCreatedEndpoints() {
        try (Fixture f = new Fixture()) {
            Endpoint reserved = f.b.ep();
            ReservedServicePoint rsp = f.b.ia.createRsp(40, reserved, f.b.evd);
            assertEquals(EpState.RESERVED, reserved.query().state());
            assertEquals(DatReturnType.CONN_QUAL_IN_USE, assertThrows(DatException.class,
                    () -> f.b.ia.createPsp(40, f.b.evd, PspFlag.CONSUMER)).type());
            Endpoint active = f.a.ep();
            active.connect(addressOf(f.b), 40, Fixture.WAIT, null);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, f.b.next());
            assertNull(cr.servicePoint());
            assertTrue(rsp.isFreed());
            assertEquals(EpState.PASSIVE_CONNECTION_PENDING, reserved.query().state());
            assertEquals(DatReturnType.INVALID_STATE, assertThrows(DatException.class, reserved::free).type());
            cr.request().reject(null);
            f.a.nextConnection(EventNumber.CONNECTION_PEER_REJECTED);
            assertEquals(EpState.UNCONNECTED, reserved.query().state());

            f.b.ia.createPsp(41, f.b.evd, PspFlag.PROVIDER);
            Endpoint second = f.a.ep();
            second.connect(addressOf(f.b), 41, Fixture.WAIT, null);
            DatEvent.ConnectionRequest pcr = assertInstanceOf(DatEvent.ConnectionRequest.class, f.b.next());
            Endpoint provided = pcr.request().query().localEp();
            assertEquals(EpState.TENTATIVE_CONNECTION_PENDING, provided.query().state());
            assertNull(provided.query().pz());
            MemorySegment inbox = Arena.ofAuto().allocate(16);
            LocalMemoryRegion inboxLmr = f.b.lmr(inbox);
            DatException noPz = assertThrows(DatException.class,
                    () -> provided.postRecv(Fixture.iov(inboxLmr, 0, 16), 1, Dat.COMPLETION_DEFAULT));
            assertEquals(DatReturnType.PROTECTION_VIOLATION, noPz.type());
            provided.modify(f.b.pz, null, f.b.evd, f.b.evd, null);
            assertEquals(f.b.pz, provided.query().pz());
            assertEquals(DatReturnType.INVALID_STATE,
                    assertThrows(DatException.class, f.b.pz::free).type(), "the PZ is in use by the EP");
            provided.postRecv(Fixture.iov(inboxLmr, 0, 16), 1, Dat.COMPLETION_DEFAULT);
            pcr.request().accept(null, new byte[] {9});
            f.b.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
            DatEvent.Connection est = f.a.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
            assertEquals(9, est.privateData()[0]);
            assertEquals(EpState.CONNECTED, provided.query().state());
            assertEquals(DatReturnType.INVALID_STATE, assertThrows(DatException.class,
                    () -> provided.modify(f.b.pz, null, null, null, null)).type());
            MemorySegment outbox = Arena.ofAuto().allocate(16).fill((byte) 0x5a);
            second.postSend(Fixture.iov(f.a.lmr(outbox), 0, 16), 2, Dat.COMPLETION_DEFAULT);
            assertEquals(DtoStatus.SUCCESS, f.b.nextDto().status());
            assertEquals(0x5a, inbox.get(ValueLayout.JAVA_BYTE, 15));
        }
    }

    @Test
    void handoffDeliversTheRequestToAnotherQualifier() {
        try (Fixture f = new Fixture()) {
            f.b.ia.createPsp(50, f.b.evd, PspFlag.CONSUMER);
            f.b.ia.createPsp(51, f.b.evd, PspFlag.CONSUMER);
            Endpoint active = f.a.ep();
            active.connect(addressOf(f.b), 50, Fixture.WAIT, new byte[] {1, 2, 3});
            DatEvent.ConnectionRequest first = assertInstanceOf(DatEvent.ConnectionRequest.class, f.b.next());
            assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                    () -> first.request().handoff(52)).type());
            first.request().handoff(51);
            assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class,
                    () -> first.request().query()).type());
            DatEvent.ConnectionRequest second = assertInstanceOf(DatEvent.ConnectionRequest.class, f.b.next());
            assertEquals(51, second.connQual());
            assertEquals(3, second.request().query().privateData().length);
            Endpoint passive = f.b.ep();
            second.request().accept(passive, null);
            f.a.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
        }
    }

    @Test
    void commonServicePointIsReachedByAddressAndPort() {
        try (Fixture f = new Fixture()) {
            InetSocketAddress ia = (InetSocketAddress) addressOf(f.b);
            CommonServicePoint csp = f.b.ia.createCsp(new InetSocketAddress(ia.getAddress(), 4791), f.b.evd);
            assertEquals(DatReturnType.PORT_IN_USE, assertThrows(DatException.class,
                    () -> f.b.ia.createCsp(new InetSocketAddress(ia.getAddress(), 4791), f.b.evd)).type());
            Endpoint active = f.a.ep();
            active.commonConnect(csp.query().address(), Fixture.WAIT, null);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, f.b.next());
            assertEquals(csp, cr.servicePoint());
            cr.request().accept(f.b.ep(), null);
            f.a.nextConnection(EventNumber.CONNECTION_ESTABLISHED);
        }
    }

    @Test
    void sharedReceiveQueueServesSeveralEndpoints() {
        try (Fixture f = new Fixture()) {
            SharedReceiveQueue srq = f.b.ia.createSrq(f.b.pz, new SrqAttributes(8, 1, 0));
            Endpoint p1 = f.b.ia.createEpWithSrq(f.b.pz, f.b.evd, f.b.evd, f.b.evd, srq, null);
            Endpoint p2 = f.b.ia.createEpWithSrq(f.b.pz, f.b.evd, f.b.evd, f.b.evd, srq, null);
            Endpoint a1 = f.a.ep();
            Endpoint a2 = f.a.ep();
            f.connect(a1, p1, null);
            f.connect(a2, p2, null);
            LocalMemoryRegion sink = f.b.lmr(f.memory(64));
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            assertEquals(DatReturnType.INVALID_STATE, assertThrows(DatException.class,
                    () -> p1.postRecv(iov(sink, 0, 8), 1, none())).type());
            srq.postRecv(iov(sink, 0, 8), 1);
            srq.postRecv(iov(sink, 8, 8), 2);
            a2.postSend(iov(src, 0, 8), 10, none());
            a1.postSend(iov(src, 0, 8), 11, none());
            DatEvent.DtoCompletion r1 = f.b.nextDto();
            DatEvent.DtoCompletion r2 = f.b.nextDto();
            assertEquals(1, r1.cookie());
            assertEquals(2, r2.cookie());
            assertEquals(java.util.Set.of(p1, p2), java.util.Set.of(r1.ep(), r2.ep()));
            assertEquals(DatReturnSubtype.INVALID_STATE_SRQ_IN_USE, assertThrows(DatException.class, srq::free)
                    .subtype());
            assertEquals(1, p1.recvQuery().buffersAllocated());
        }
    }

    @Test
    void providerChecksIaParams() {
        EmuProvider provider = new EmuProvider();
        assertTrue(provider.check(new IaSpec("x", "loopback", "", true, "")).canServe());
        assertTrue(provider.check(new IaSpec("x", "loopback lab-1", "", true, "")).canServe());
        assertTrue(provider.check(new IaSpec("x", "tcp 127.0.0.1:0", "", true, "")).canServe());
        assertFalse(provider.check(new IaSpec("x", "tcp 127.0.0.1", "", true, "")).canServe());
        assertFalse(provider.check(new IaSpec("x", "", "", true, "")).canServe());
        assertFalse(provider.check(new IaSpec("x", "loopback a b", "", true, "")).canServe());
        assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                () -> provider.open(new IaSpec("x", "ib0 1", "", true, ""), 4)).type());
        assertEquals("emu0", provider.defaultIas().getFirst().iaName());
        assertEquals("loopback", provider.defaultIas().getFirst().iaParams());
        assertEquals("emu", provider.name());
    }

    @Test
    void gracefulIaCloseRefusesLiveObjectsAndAbruptFreesThem() {
        EmuProvider provider = new EmuProvider();
        var ia = provider.open(new IaSpec("x", "loopback", "", true, ""), 4);
        var pz = ia.createPz();
        DatException e = assertThrows(DatException.class, () -> ia.close(CloseFlag.GRACEFUL));
        assertEquals(DatReturnSubtype.INVALID_STATE_IA_IN_USE, e.subtype());
        ia.close(CloseFlag.ABRUPT);
        assertTrue(pz.isFreed());
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, pz::query).type());
        assertEquals(HandleType.IA.invalidHandleSubtype(),
                assertThrows(DatException.class, () -> ia.close(CloseFlag.ABRUPT)).subtype());
        ia.close();
        var clean = provider.open(new IaSpec("y", "loopback", "", true, ""), 4);
        clean.close(CloseFlag.GRACEFUL);
    }

    @Test
    void abortBreaksConnectionsAndInvalidatesHandles() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion sink = f.a.lmr(f.memory(8));
            eps[0].postRecv(iov(sink, 0, 8), 3, none());
            var async = f.a.ia.query().asyncEvd();
            f.provider.abort(f.a.ia, "test abort");
            f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
            assertEquals(EpState.DISCONNECTED, eps[1].query().state());
            assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, eps[0]::query).type());
            assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, async::count).type());
            assertEquals(0, f.provider.openObjects().get(HandleType.LMR) - 0 - countLmrsOfB(f));
        }
    }

    private static int countLmrsOfB(Fixture f) {
        return ((EmuIa) f.b.ia).objectCounts().getOrDefault(HandleType.LMR, 0);
    }

    @Test
    void sendWithoutReceiveCompletesReceiverNotReadyAfterTheRetryTime() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion src = f.a.lmr(f.memory(8));
            long start = System.nanoTime();
            eps[0].postSend(iov(src, 0, 8), 1, none());
            eps[0].postSend(iov(src, 0, 8), 2, none());
            DatEvent.DtoCompletion first = f.a.nextDto();
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertEquals(DtoStatus.RECEIVER_NOT_READY, first.status());
            assertTrue(tookMs >= EmuLimits.RNR_RETRY_MILLIS - 5, "RNR after " + tookMs + " ms");
            assertEquals(DtoStatus.FLUSHED, f.a.nextDto().status());
            f.a.nextConnection(EventNumber.CONNECTION_BROKEN);
            f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
        }
    }
}
