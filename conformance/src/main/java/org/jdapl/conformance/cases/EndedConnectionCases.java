package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.jdapl.conformance.Conformance;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;

import static org.jdapl.conformance.cases.DisconnectCases.FILL;
import static org.jdapl.conformance.cases.DisconnectCases.ended;
import static org.jdapl.conformance.cases.DisconnectCases.postReceives;

/**
 * The cases of a connection that has ended (DISC_13 to DISC_18): the peer is told, simultaneous
 * disconnects give each side one event, no byte moves after DISCONNECTED in either direction, a
 * broken transport is reported and flushes, and {@code dat_ep_reset} makes the EP connectable again.
 * The cases of the disconnect itself are {@link DisconnectCases}.
 */
public final class EndedConnectionCases {
    @Conformance("DISC_13")
    public void remoteDisconnectIsIndicatedAndFlushesPeer(Rig rig) {
        long base = 100;
        for (CloseFlag flag : CloseFlag.values()) {
            Link l = Link.open(rig);
            List<Long> recvs = postReceives(l.b(), l.epB(), 4, base);
            base += 100;
            l.epA().disconnect(flag);
            ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after a " + flag + " disconnect");
            ended(l.b(), l.epB(), EventNumber.CONNECTION_DISCONNECTED, "at the peer of a " + flag + " disconnect");
            var got = Events.completions(l.b().recvEvd, recvs, rig, "of the peer's receives");
            Events.allStatus(got, DtoStatus.FLUSHED, "the peer's receives after a remote " + flag + " disconnect");
            Events.none(l.b().connEvd, rig.grace(), "at the peer after DISCONNECTED");
        }
    }

    @Conformance("DISC_14")
    public void simultaneousDisconnectsEachGetOneEvent(Rig rig) throws InterruptedException {
        CloseFlag[][] rounds = {{CloseFlag.GRACEFUL, CloseFlag.GRACEFUL}, {CloseFlag.ABRUPT, CloseFlag.ABRUPT},
            {CloseFlag.GRACEFUL, CloseFlag.ABRUPT}};
        for (CloseFlag[] flags : rounds) {
            Link l = Link.open(rig);
            CyclicBarrier start = new CyclicBarrier(2);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t = Thread.ofPlatform().daemon().name("conformance-DISC_14-peer").start(() -> {
                try {
                    start.await();
                    l.epB().disconnect(flags[1]);
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            try {
                start.await();
                l.epA().disconnect(flags[0]);
            } catch (java.util.concurrent.BrokenBarrierException e) {
                throw new AssertionError("the peer thread did not start", e);
            }
            t.join(rig.eventTimeout().toMillis());
            Checks.check(!t.isAlive(), "the peer's disconnect did not return within " + rig.eventTimeout());
            if (failure.get() != null) {
                throw new AssertionError("the peer's " + flags[1] + " disconnect failed: " + failure.get(), failure.get());
            }
            String what = flags[0] + "/" + flags[1] + " disconnects at once";
            ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after " + what);
            ended(l.b(), l.epB(), EventNumber.CONNECTION_DISCONNECTED, "at the peer after " + what);
            Events.none(l.a().connEvd, rig.grace(), "after " + what);
            Events.none(l.b().connEvd, Duration.ofMillis(1), "at the peer after " + what);
        }
    }

    @Conformance("DISC_15")
    public void noByteMovesAfterDisconnected(Rig rig) {
        boolean hold = rig.fixture().canHoldTransfers();
        for (CloseFlag flag : CloseFlag.values()) {
            Link l = Link.open(rig);
            int size = 8192;
            int n = hold ? 1 : 16;
            LocalMemoryRegion srcA = l.a().lmr(size, (byte) 0);
            Bytes.pattern(srcA.segment(), 21);
            LocalMemoryRegion readSrcB = l.b().lmr(size, (byte) 0);
            Bytes.pattern(readSrcB.segment(), 22);
            LocalMemoryRegion targetB = l.b().lmr((long) size * n, FILL);
            LocalMemoryRegion sinkA = l.a().lmr((long) size * n, FILL);
            LocalMemoryRegion recvB = l.b().lmr((long) size * n, FILL);
            Map<Long, Move> moves = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                l.epB().postRecv(List.of(Link.local(recvB, (long) size * i, size)), 900 + i, Dat.COMPLETION_DEFAULT);
            }
            if (hold) {
                rig.hold(l.a().ia, true);
            }
            for (int i = 0; i < n; i++) {
                long off = (long) size * i;
                l.epA().postSend(List.of(Link.local(srcA, 0, size)), 100 + i, Dat.COMPLETION_DEFAULT);
                moves.put(100L + i, new Move(srcA.segment(), 2, off));
                l.epA().postRdmaWrite(List.of(Link.local(srcA, 0, size)), 200 + i, Link.remote(targetB, off, size),
                        Dat.COMPLETION_DEFAULT);
                moves.put(200L + i, new Move(srcA.segment(), 0, off));
                l.epA().postRdmaRead(List.of(Link.local(sinkA, off, size)), 300 + i, Link.remote(readSrcB, 0, size),
                        Dat.COMPLETION_DEFAULT);
                moves.put(300L + i, new Move(readSrcB.segment(), 1, off));
            }
            l.epA().disconnect(flag);
            if (hold && flag == CloseFlag.GRACEFUL) {
                Checks.state(l.epA(), EpState.DISCONNECT_PENDING, "a graceful disconnect with held transfers");
                Events.none(l.a().connEvd, rig.grace(), "while transfers are held at a graceful disconnect");
                rig.hold(l.a().ia, false);
            }
            ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after a " + flag + " disconnect");
            byte[][] atEvent = {Bytes.snapshot(targetB.segment()), Bytes.snapshot(sinkA.segment()),
                Bytes.snapshot(recvB.segment())};
            if (hold && flag == CloseFlag.ABRUPT) {
                rig.hold(l.a().ia, false);
            }
            var got = Events.completions(l.a().reqEvd, moves.keySet(), rig, "of the transfers");
            if (flag == CloseFlag.GRACEFUL) {
                Events.allStatus(got, DtoStatus.SUCCESS, "transfers at a graceful disconnect");
            }
            Events.drainFor(l.b().connEvd, rig.grace());
            Events.drainFor(l.b().recvEvd, rig.grace());
            Bytes.same(atEvent[0], targetB.segment(), "the RDMA Write target at the peer after DISCONNECTED (" + flag + ")");
            Bytes.same(atEvent[1], sinkA.segment(), "the local RDMA Read sink after DISCONNECTED (" + flag + ")");
            Bytes.same(atEvent[2], recvB.segment(), "the peer's receive buffers after DISCONNECTED (" + flag + ")");
            MemorySegment[] destinations = {targetB.segment(), sinkA.segment(), recvB.segment()};
            for (var e : got.entrySet()) {
                Move m = moves.get(e.getKey());
                if (e.getValue().status() == DtoStatus.SUCCESS) {
                    byte[] landed = Arrays.copyOfRange(atEvent[m.destination()], (int) m.offset(),
                            (int) m.offset() + size);
                    Bytes.same(Bytes.snapshot(m.source()), landed, "data of DTO " + e.getKey()
                            + " that completed SUCCESS, at the DISCONNECTED event (" + flag + ")");
                } else if (hold) {
                    Bytes.all(destinations[m.destination()].asSlice(m.offset(), size), FILL,
                            "the destination of held DTO " + e.getKey() + " that completed " + e.getValue().status());
                }
            }
        }
        if (!hold) {
            rig.note("without a transfer hold: checked with transfers racing the disconnect");
        }
    }

    /** Where a DTO moves data: its source, which destination segment, and the offset there. */
    private record Move(MemorySegment source, int destination, long offset) {
    }

    @Conformance("DISC_16")
    public void noHalfClosedConnection(Rig rig) {
        for (CloseFlag flag : CloseFlag.values()) {
            Link l = Link.open(rig);
            LocalMemoryRegion memA = l.a().lmr(4096, FILL);
            LocalMemoryRegion memB = l.b().lmr(4096, FILL);
            LocalMemoryRegion srcA = l.a().lmr(64, (byte) 1);
            LocalMemoryRegion srcB = l.b().lmr(64, (byte) 2);
            var remoteA = Link.remote(memA, 0, 64);
            var remoteB = Link.remote(memB, 0, 64);
            l.epA().disconnect(flag);
            ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after a " + flag + " disconnect");
            tryMoves(rig, l.epA(), l.a(), srcA, memA, remoteB, "the side that disconnected (" + flag + ")");
            tryMoves(rig, l.epB(), l.b(), srcB, memB, remoteA, "the peer of a completed " + flag + " disconnect");
            Events.drainFor(l.b().connEvd, rig.grace());
            Bytes.all(memA.segment(), FILL, "the disconnecting side's memory");
            Bytes.all(memB.segment(), FILL, "the peer's memory");
        }
    }

    /** Posts a send, an RDMA Write and an RDMA Read; each must fail sync or complete unsuccessfully. */
    private static void tryMoves(Rig rig, Endpoint ep, Side side, LocalMemoryRegion src, LocalMemoryRegion sink,
                                 org.jdapl.dat.RmrTriplet remote, String who) {
        Set<Long> posted = new HashSet<>();
        if (Checks.attempt("send by " + who, () -> ep.postSend(List.of(Link.local(src, 0, 64)), 1,
                Dat.COMPLETION_DEFAULT)) == null) {
            posted.add(1L);
        }
        if (Checks.attempt("RDMA Write by " + who, () -> ep.postRdmaWrite(List.of(Link.local(src, 0, 64)), 2, remote,
                Dat.COMPLETION_DEFAULT)) == null) {
            posted.add(2L);
        }
        if (Checks.attempt("RDMA Read by " + who, () -> ep.postRdmaRead(List.of(Link.local(sink, 0, 64)), 3, remote,
                Dat.COMPLETION_DEFAULT)) == null) {
            posted.add(3L);
        }
        var got = Events.completions(side.reqEvd, posted, rig, "of posts by " + who);
        for (var d : got.values()) {
            Checks.check(d.status() != DtoStatus.SUCCESS, who + " moved data after the disconnect completed: "
                    + Events.describe(d));
        }
    }

    @Conformance("DISC_17")
    public void brokenTransportIsReportedAndFlushes(Rig rig) {
        Link l = Link.open(rig);
        List<Long> recvA = postReceives(l.a(), l.epA(), 4, 100);
        List<Long> recvB = postReceives(l.b(), l.epB(), 4, 200);
        rig.fixture().breakTransport(l.epA());
        ended(l.a(), l.epA(), EventNumber.CONNECTION_BROKEN, "after the transport broke");
        Events.allStatus(Events.completions(l.a().recvEvd, recvA, rig, "of receives"), DtoStatus.FLUSHED,
                "receives at a broken transport");
        DisconnectCases.peerEnded(rig, l, recvB, "a broken transport");
        Events.none(l.a().connEvd, rig.grace(), "after BROKEN");
        Events.none(l.b().connEvd, Duration.ofMillis(1), "at the peer after the break");
    }

    @Conformance("DISC_18")
    public void resetFlushesReceivesAndAllowsReconnect(Rig rig) {
        Link l = Link.open(rig);
        List<Long> before = postReceives(l.a(), l.epA(), 2, 100);
        l.epA().disconnect(CloseFlag.ABRUPT);
        ended(l.a(), l.epA(), EventNumber.CONNECTION_DISCONNECTED, "after disconnect");
        ended(l.b(), l.epB(), EventNumber.CONNECTION_DISCONNECTED, "at the peer");
        Events.allStatus(Events.completions(l.a().recvEvd, before, rig, "of receives at disconnect"),
                DtoStatus.FLUSHED, "receives at disconnect");
        LocalMemoryRegion late = l.a().lmr(256, FILL);
        DatException refused = Checks.attempt("a receive posted in DISCONNECTED",
                () -> l.epA().postRecv(List.of(Link.local(late, 0, 256)), 150, Dat.COMPLETION_DEFAULT));
        l.epA().reset();
        Checks.state(l.epA(), EpState.UNCONNECTED, "after dat_ep_reset");
        if (refused == null) {
            Events.allStatus(Events.completions(l.a().recvEvd, List.of(150L), rig, "of the receive posted before reset"),
                    DtoStatus.FLUSHED, "a receive posted before reset");
        } else {
            rig.note("a receive posted in DISCONNECTED was refused sync " + refused.type());
        }
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_ep_reset of an UNCONNECTED EP", () -> l.epA().reset());
        LocalMemoryRegion sink = l.a().lmr(256, FILL);
        l.epA().postRecv(List.of(Link.local(sink, 0, 256)), 160, Dat.COMPLETION_DEFAULT);
        Link again = Link.connect(l.a(), l.b(), l.epA(), l.b().ep());
        LocalMemoryRegion src = l.b().lmr(256, (byte) 0);
        Bytes.pattern(src.segment(), 5);
        again.epB().postSend(List.of(Link.local(src, 0, 256)), 170, Dat.COMPLETION_DEFAULT);
        Events.allStatus(Events.completions(l.b().reqEvd, List.of(170L), rig, "of the send on the new connection"),
                DtoStatus.SUCCESS, "a send on the new connection");
        var got = Events.completions(l.a().recvEvd, List.of(160L), rig, "of the receive on the new connection");
        Events.allStatus(got, DtoStatus.SUCCESS, "a receive on the new connection");
        Checks.equal(256L, got.get(160L).transferredLength(), "received bytes");
        Bytes.same(Bytes.snapshot(src.segment()), sink.segment(), "the data received on the new connection");
    }
}
