package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unreliable datagrams between two tcp IAs of this JVM (PROTOCOL.md, "Datagrams"): the UD exchange
 * over a CONNECT_REQ with the UD flag, DATAGRAM frames with their boundaries and the sender's handle,
 * their loss rules, and the flush of a disconnected datagram endpoint's receives.
 */
@Timeout(60)
class TcpDatagramsTest {
    private static DatagramEndpoint udEp(Fixture.Side s) {
        return s.ia.createDatagramEp(s.pz, s.evd, s.evd, s.evd, EpAttributes.defaults());
    }

    private static DatEvent.UdConnection ud(Fixture.Side s, EventNumber expected) {
        DatEvent e = s.next();
        DatEvent.UdConnection u = assertInstanceOf(DatEvent.UdConnection.class, e, () -> "got " + e);
        assertEquals(expected, u.number(), () -> "got " + e);
        return u;
    }

    private static DatEvent.ExtendedDtoCompletion ext(Fixture.Side s, ExtensionType type) {
        DatEvent e = s.next();
        DatEvent.ExtendedDtoCompletion x = assertInstanceOf(DatEvent.ExtendedDtoCompletion.class, e, () -> "got " + e);
        assertEquals(type, x.type(), () -> "got " + e);
        return x;
    }

    /** No event comes on {@code s} within 300 ms. */
    private static void quiet(Fixture.Side s, String what) {
        long end = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < end) {
            java.util.Optional<DatEvent> e = s.evd.dequeue();
            assertTrue(e.isEmpty(), () -> "an event " + what + ": " + e.get());
            try {
                Thread.sleep(10);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The exchange: ea of A asks B's PSP, eb accepts; returns {handle of eb at A, handle of ea at B}. */
    private static AddressHandle[] exchange(Fixture f, DatagramEndpoint ea, DatagramEndpoint eb) {
        PublicServicePoint psp = f.b.ia.createPspAny(f.b.evd, PspFlag.CONSUMER);
        try {
            ea.connect(f.b.ia.query().attributes().address(), psp.query().connQual(), Fixture.WAIT, new byte[] {1, 2});
            DatEvent.UdConnection req = ud(f.b, EventNumber.IB_UD_CONNECTION_REQUEST);
            assertArrayEquals(new byte[] {1, 2}, req.privateData());
            req.request().accept(eb, new byte[] {3});
            DatEvent.UdConnection passive = ud(f.b, EventNumber.IB_UD_CONNECTION_ESTABLISHED);
            DatEvent.UdConnection active = ud(f.a, EventNumber.IB_UD_CONNECTION_ESTABLISHED);
            assertEquals(ExtensionType.UD_PASSIVE_REMOTE_AH, passive.type());
            assertEquals(ExtensionType.UD_REMOTE_AH, active.type());
            assertArrayEquals(new byte[] {3}, active.privateData());
            assertEquals(eb.query().state(), org.jdapl.dat.EpState.CONNECTED);
            return new AddressHandle[] {active.remoteAh(), passive.remoteAh()};
        } finally {
            psp.free();
        }
    }

    /** EXT_08: datagrams keep their boundaries over tcp, carry the sender's handle, which answers. */
    @Test
    void EXT_08_datagramsOverTcpKeepTheirBoundariesAndTheSendersHandleAnswers() {
        try (Fixture f = Fixture.tcp()) {
            assertEquals("TRUE", f.a.ia.query().provider().specific().get(ProviderAttributes.DAT_IB_UD));
            DatagramEndpoint ea = udEp(f.a);
            DatagramEndpoint eb = udEp(f.b);
            AddressHandle[] ah = exchange(f, ea, eb);
            assertEquals(((EmuUdEp) eb).qpn(), ah[0].qpn());
            assertEquals(((EmuUdEp) ea).qpn(), ah[1].qpn());
            MemorySegment src = f.memory(64);
            for (int i = 0; i < 64; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            LocalMemoryRegion s = f.a.lmr(src);
            MemorySegment dst = f.memory(256);
            LocalMemoryRegion d = f.b.lmr(dst);
            eb.postRecv(iov(d, 0, 128), 10, none());
            eb.postRecv(iov(d, 128, 128), 11, none());
            ea.postSendDatagram(ah[0], iov(s, 0, 3), 1, none());
            ea.postSendDatagram(ah[0], iov(s, 10, 7), 2, none());
            assertEquals(DtoStatus.SUCCESS, ext(f.a, ExtensionType.UD_SEND).status());
            assertEquals(DtoStatus.SUCCESS, ext(f.a, ExtensionType.UD_SEND).status());
            DatEvent.ExtendedDtoCompletion r1 = ext(f.b, ExtensionType.UD_RECV);
            DatEvent.ExtendedDtoCompletion r2 = ext(f.b, ExtensionType.UD_RECV);
            assertEquals(10, r1.cookie());
            assertEquals(3, r1.transferredLength());
            assertEquals(11, r2.cookie());
            assertEquals(7, r2.transferredLength());
            assertEquals(2, dst.get(ValueLayout.JAVA_BYTE, 2));
            assertEquals(16, dst.get(ValueLayout.JAVA_BYTE, 128 + 6));
            assertEquals(ah[1], r1.remoteAh());
            assertEquals(((EmuUdEp) ea).qpn(), r1.remoteAh().qpn());

            MemorySegment back = f.memory(8);
            ea.postRecv(iov(f.a.lmr(back), 0, 8), 20, none());
            eb.postSendDatagram(r2.remoteAh(), iov(d, 0, 3), 21, none());
            assertEquals(DtoStatus.SUCCESS, ext(f.b, ExtensionType.UD_SEND).status());
            DatEvent.ExtendedDtoCompletion answer = ext(f.a, ExtensionType.UD_RECV);
            assertEquals(3, answer.transferredLength());
            assertEquals(ah[0], answer.remoteAh());
            assertEquals(2, back.get(ValueLayout.JAVA_BYTE, 2));
        }
    }

    /** EXT_10: nobody listening is IB_UD_CONNECTION_ERROR; a reject IB_UD_CONNECTION_REJECT with its data. */
    @Test
    void EXT_10_tcpExchangeWithNobodyListeningErrsAndARejectCarriesItsData() {
        try (Fixture f = Fixture.tcp()) {
            DatagramEndpoint ea = udEp(f.a);
            ea.connect(f.b.ia.query().attributes().address(), 4242, Fixture.WAIT, new byte[0]);
            DatEvent.UdConnection error = ud(f.a, EventNumber.IB_UD_CONNECTION_ERROR);
            assertNull(error.remoteAh());
            PublicServicePoint psp = f.b.ia.createPspAny(f.b.evd, PspFlag.CONSUMER);
            ea.connect(f.b.ia.query().attributes().address(), psp.query().connQual(), Fixture.WAIT, new byte[] {1});
            ud(f.b, EventNumber.IB_UD_CONNECTION_REQUEST).request().reject(new byte[] {9, 8});
            DatEvent.UdConnection rejected = ud(f.a, EventNumber.IB_UD_CONNECTION_REJECT);
            assertNull(rejected.remoteAh());
            assertArrayEquals(new byte[] {9, 8}, rejected.privateData());
            psp.free();
        }
    }

    /**
     * EXT_11, EXT_12: a datagram with no receive posted is lost, the next takes the next receive; one
     * longer than the receive completes it LOCAL_LENGTH; disconnect flushes the receives once each and
     * datagrams sent afterwards are lost.
     */
    @Test
    void EXT_11_EXT_12_tcpDatagramsAreLostWithoutAReceiveAndDisconnectFlushesOnce() {
        try (Fixture f = Fixture.tcp()) {
            DatagramEndpoint ea = udEp(f.a);
            DatagramEndpoint eb = udEp(f.b);
            AddressHandle[] ah = exchange(f, ea, eb);
            MemorySegment src = f.memory(64);
            src.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
            src.set(ValueLayout.JAVA_BYTE, 8, (byte) 2);
            LocalMemoryRegion s = f.a.lmr(src);
            MemorySegment dst = f.memory(64);
            LocalMemoryRegion d = f.b.lmr(dst);
            ea.postSendDatagram(ah[0], iov(s, 0, 8), 1, none());
            assertEquals(DtoStatus.SUCCESS, ext(f.a, ExtensionType.UD_SEND).status());
            quiet(f.b, "for a datagram sent while no receive was posted");
            eb.postRecv(iov(d, 0, 16), 10, none());
            quiet(f.b, "late, for the datagram that found no receive");
            ea.postSendDatagram(ah[0], iov(s, 8, 8), 2, none());
            ext(f.a, ExtensionType.UD_SEND);
            DatEvent.ExtendedDtoCompletion r = ext(f.b, ExtensionType.UD_RECV);
            assertEquals(10, r.cookie());
            assertEquals(2, dst.get(ValueLayout.JAVA_BYTE, 0), "the lost datagram took the receive");

            eb.postRecv(iov(d, 0, 4), 11, none());
            ea.postSendDatagram(ah[0], iov(s, 0, 16), 3, none());
            ext(f.a, ExtensionType.UD_SEND);
            assertEquals(DtoStatus.LOCAL_LENGTH, ext(f.b, ExtensionType.UD_RECV).status());

            eb.postRecv(iov(d, 0, 8), 12, none());
            eb.postRecv(iov(d, 8, 8), 13, none());
            eb.disconnect(CloseFlag.ABRUPT);
            java.util.Set<Long> flushed = new java.util.HashSet<>();
            for (int i = 0; i < 3; i++) {
                DatEvent e = f.b.next();
                if (e instanceof DatEvent.DtoCompletion c) {
                    assertEquals(DtoStatus.FLUSHED, c.status());
                    assertTrue(flushed.add(c.cookie()), () -> "a second completion " + e);
                } else if (e instanceof DatEvent.ExtendedDtoCompletion x) {
                    assertEquals(DtoStatus.FLUSHED, x.status());
                    assertTrue(flushed.add(x.cookie()), () -> "a second completion " + e);
                } else {
                    assertEquals(EventNumber.CONNECTION_DISCONNECTED, e.number(), () -> "got " + e);
                }
            }
            assertEquals(java.util.Set.of(12L, 13L), flushed);
            ea.postSendDatagram(ah[0], iov(s, 0, 8), 4, none());
            ext(f.a, ExtensionType.UD_SEND);
            quiet(f.b, "for a datagram sent to a disconnected endpoint");
            assertNotNull(ah[1]);
        }
    }
}
