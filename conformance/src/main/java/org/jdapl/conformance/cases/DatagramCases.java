package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.jdapl.conformance.Conformance;
import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.PublicServicePoint;

/** EXT_08, EXT_10..EXT_12: unreliable datagrams, their exchanges and their loss rules. */
public final class DatagramCases {
    /** Two datagram endpoints of a fresh pair, exchanged. */
    private record Ud(Side a, Side b, DatagramEndpoint ea, DatagramEndpoint eb, AddressHandle toB, AddressHandle toA) {
        static Ud open(Rig rig) {
            Side[] s = rig.pair();
            Extended.require(s[0], ProviderAttributes.DAT_IB_UD);
            DatagramEndpoint ea = Extended.udEp(s[0]);
            DatagramEndpoint eb = Extended.udEp(s[1]);
            AddressHandle[] ah = Extended.exchange(s[0], ea, s[1], eb);
            return new Ud(s[0], s[1], ea, eb, ah[0], ah[1]);
        }
    }

    private static DatEvent.ExtendedDtoCompletion sent(Ud u, long cookie, Rig rig) {
        DatEvent.ExtendedDtoCompletion x = Extended.completion(u.a.reqEvd, rig.eventTimeout(), "for datagram " + cookie);
        Checks.equal(cookie, x.cookie(), "the datagram's cookie");
        Checks.equal(ExtensionType.UD_SEND, x.type(), "the sender's extension type");
        Checks.equal(DtoStatus.SUCCESS, x.status(), "the sender's completion of datagram " + cookie);
        return x;
    }

    @Conformance("EXT_08")
    public void datagramsKeepTheirBoundaries(Rig rig) {
        Ud u = Ud.open(rig);
        int[] sizes = {1, 17, 64};
        LocalMemoryRegion recv = u.b.lmr(3 * 128L, (byte) 0);
        for (int i = 0; i < sizes.length; i++) {
            u.eb.postRecv(List.of(Link.local(recv, 128L * i, 128)), 10 + i, Set.of());
        }
        MemorySegment source = rig.segment(256, (byte) 0);
        Bytes.pattern(source, 3);
        LocalMemoryRegion src = u.a.lmr(source, org.jdapl.dat.Dat.MEM_PRIV_ALL);
        long at = 0;
        for (int i = 0; i < sizes.length; i++) {
            u.ea.postSendDatagram(u.toB, List.of(Link.local(src, at, sizes[i])), 1 + i, Set.of());
            at += sizes[i];
        }
        for (int i = 0; i < sizes.length; i++) {
            sent(u, 1 + i, rig);
        }
        at = 0;
        AddressHandle sender = null;
        for (int i = 0; i < sizes.length; i++) {
            DatEvent.ExtendedDtoCompletion x = Extended.completion(u.b.recvEvd, rig.eventTimeout(), "for datagram " + i);
            Checks.equal(10L + i, x.cookie(), "the receive datagram " + i + " filled");
            Checks.equal(ExtensionType.UD_RECV, x.type(), "the receiver's extension type");
            Checks.equal(DtoStatus.SUCCESS, x.status(), "the receive of datagram " + i);
            Checks.equal((long) sizes[i], x.transferredLength(), "the length of datagram " + i);
            Checks.check(x.remoteAh() != null, "UD_RECV without the sender's address handle");
            Checks.equal(u.toA.qpn(), x.remoteAh().qpn(), "the sender's qpn in UD_RECV");
            Bytes.same(Bytes.snapshot(source.asSlice(at, sizes[i])), recvBytes(recv, i, sizes[i]), "datagram " + i);
            at += sizes[i];
            sender = x.remoteAh();
        }
        LocalMemoryRegion back = u.a.lmr(64, (byte) 0);
        u.ea.postRecv(List.of(Link.local(back, 0, 64)), 20, Set.of());
        u.eb.postSendDatagram(sender, List.of(Link.local(recv, 0, 8)), 30, Set.of());
        DatEvent.ExtendedDtoCompletion answer = Extended.completion(u.a.recvEvd, rig.eventTimeout(),
                "for the answer sent to the UD_RECV's address handle");
        Checks.equal(20L, answer.cookie(), "the receive the answer filled");
        Checks.equal(8L, answer.transferredLength(), "the answer's length");
        Checks.equal(u.toB.qpn(), answer.remoteAh().qpn(), "the answer's sender");
    }

    /** The bytes receive {@code i} of {@code lmr} holds ({@code length} of its 128). */
    private static byte[] recvBytes(LocalMemoryRegion lmr, int i, int length) {
        return Bytes.snapshot(lmr.query().segment().asSlice(128L * i, length));
    }

    @Conformance("EXT_10")
    public void failedAndRejectedExchangesHandOutNoAddress(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_IB_UD);
        DatagramEndpoint ea = Extended.udEp(s[0]);
        ea.connect(s[1].address(), rig.connQual(), rig.longConnectTimeoutMicros(), new byte[0]);
        DatEvent.UdConnection error = Extended.udEvent(s[0].connEvd, EventNumber.IB_UD_CONNECTION_ERROR,
                rig.eventTimeout(), "for a UD exchange nobody listens for");
        Checks.equal(ExtensionType.UD_CONNECT_ERROR, error.type(), "the error's extension type");
        Checks.check(error.remoteAh() == null, "IB_UD_CONNECTION_ERROR with an address handle");
        long q = rig.connQual();
        PublicServicePoint psp = s[1].psp(q);
        try {
            ea.connect(s[1].address(), q, rig.longConnectTimeoutMicros(), new byte[] {1});
            DatEvent.UdConnection req = Extended.udEvent(s[1].crEvd, EventNumber.IB_UD_CONNECTION_REQUEST,
                    rig.eventTimeout(), "at the service point");
            req.request().reject(new byte[] {9, 8});
        } finally {
            psp.free();
        }
        DatEvent.UdConnection rejected = Extended.udEvent(s[0].connEvd, EventNumber.IB_UD_CONNECTION_REJECT,
                rig.eventTimeout(), "for a rejected UD exchange");
        Checks.equal(ExtensionType.UD_CONNECT_REJECT, rejected.type(), "the reject's extension type");
        Checks.check(rejected.remoteAh() == null, "IB_UD_CONNECTION_REJECT with an address handle");
        Checks.check(java.util.Arrays.equals(new byte[] {9, 8}, rejected.privateData()),
                "the rejecter's private data: " + java.util.Arrays.toString(rejected.privateData()));
    }

    @Conformance("EXT_11")
    public void datagramsFollowTheirLossRules(Rig rig) {
        Ud u = Ud.open(rig);
        LocalMemoryRegion src = u.a.lmr(u.ea.maxDatagramSize() + 1L, (byte) 0x11);
        u.ea.postSendDatagram(u.toB, List.of(Link.local(src, 0, 16)), 1, Set.of());
        sent(u, 1, rig);
        Events.none(u.b.recvEvd, rig.grace(), "for a datagram sent while no receive was posted");
        MemorySegment recvBytes = rig.segment(64, (byte) 0);
        LocalMemoryRegion recv = u.b.lmr(recvBytes, org.jdapl.dat.Dat.MEM_PRIV_ALL);
        u.eb.postRecv(List.of(Link.local(recv, 0, 32)), 10, Set.of());
        Events.none(u.b.recvEvd, rig.grace(), "late, for the datagram that found no receive");
        src.query().segment().asSlice(100, 8).fill((byte) 0x22);
        u.ea.postSendDatagram(u.toB, List.of(Link.local(src, 100, 8)), 2, Set.of());
        sent(u, 2, rig);
        DatEvent.ExtendedDtoCompletion x = Extended.completion(u.b.recvEvd, rig.eventTimeout(), "for the second datagram");
        Checks.equal(10L, x.cookie(), "the receive the second datagram took");
        Checks.equal(8L, x.transferredLength(), "the second datagram's length");
        Bytes.all(recvBytes.asSlice(0, 8), (byte) 0x22, "the second datagram's bytes");
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "a datagram over the maximum datagram size",
                () -> u.ea.postSendDatagram(u.toB, List.of(Link.local(src, 0, u.ea.maxDatagramSize() + 1L)), 3,
                        Set.of()));
        u.eb.postRecv(List.of(Link.local(recv, 32, 8)), 11, Set.of());
        u.ea.postSendDatagram(u.toB, List.of(Link.local(src, 0, 32)), 4, Set.of());
        sent(u, 4, rig);
        DatEvent small = Events.next(u.b.recvEvd, rig.eventTimeout(), "for a datagram longer than its receive");
        Checks.equal(11L, Events.cookie(small), "the receive the long datagram took");
        Checks.equal(DtoStatus.LOCAL_LENGTH, Events.status(small), "a datagram longer than its receive");
    }

    @Conformance("EXT_12")
    public void disconnectFlushesReceivesAndLosesLaterDatagrams(Rig rig) {
        Ud u = Ud.open(rig);
        LocalMemoryRegion recv = u.b.lmr(3 * 64L, (byte) 0);
        for (int i = 0; i < 3; i++) {
            u.eb.postRecv(List.of(Link.local(recv, 64L * i, 64)), 10 + i, Set.of());
        }
        u.eb.disconnect(CloseFlag.ABRUPT);
        Set<Long> flushed = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            DatEvent e = Events.next(u.b.recvEvd, rig.eventTimeout(), "for the posted receives after disconnect");
            Checks.equal(DtoStatus.FLUSHED, Events.status(e), "a receive of a disconnected datagram endpoint");
            Checks.check(flushed.add(Events.cookie(e)) && Events.cookie(e) >= 10 && Events.cookie(e) <= 12,
                    "an unknown or second completion " + Events.describe(e));
        }
        LocalMemoryRegion src = u.a.lmr(64, (byte) 1);
        u.ea.postSendDatagram(u.toB, List.of(Link.local(src, 0, 8)), 1, Set.of());
        sent(u, 1, rig);
        Events.none(u.b.recvEvd, rig.grace(), "for a datagram sent to a disconnected endpoint");
        Checks.fails(DatReturnType.MODEL_NOT_SUPPORTED, null, "dat_ep_post_send on a datagram endpoint",
                () -> u.ea.postSend(List.of(Link.local(src, 0, 8)), 2, Set.of()));
        Checks.fails(DatReturnType.MODEL_NOT_SUPPORTED, null, "dat_ep_post_rdma_write on a datagram endpoint",
                () -> u.ea.postRdmaWrite(List.of(Link.local(src, 0, 8)), 3, Link.remote(recv, 0, 8), Set.of()));
    }
}
