package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.conformance.Conformance;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;

/** The cases of dat_lmr_free (LMR_*) and of remote access checks. */
public final class LmrFreeCases {
    private static final byte FILL = (byte) 0x5A;

    private static DatEvent.RmrBindCompletion bound(Side side, long cookie) {
        DatEvent e = Events.next(side.reqEvd, side.rig.eventTimeout(), "RMR bind completion");
        if (!(e instanceof DatEvent.RmrBindCompletion b) || b.cookie() != cookie) {
            throw new AssertionError("expected the RMR bind completion of cookie " + cookie + " but got "
                    + Events.describe(e));
        }
        Checks.equal(DtoStatus.SUCCESS, b.status(), "RMR bind status");
        return b;
    }

    @Conformance("LMR_01")
    public void freeWithBoundRmrFailsInvalidState(Rig rig) {
        Link l = Link.open(rig);
        RemoteMemoryRegion rmr = DisconnectCases.rmrOrNull(l.a(), rig);
        if (rmr == null) {
            throw new Skip("the provider has no RMRs (dat_rmr_create: MODEL_NOT_SUPPORTED), so no LMR is in use by one");
        }
        LocalMemoryRegion lmr = l.a().lmr(4096, FILL);
        rmr.bind(lmr, 0, 4096, Dat.MEM_PRIV_ALL, VaType.VA, l.epA(), 1, Dat.COMPLETION_DEFAULT);
        bound(l.a(), 1);
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_lmr_free with a bound RMR", lmr::free);
        Checks.check(!lmr.isFreed(), "a refused free freed the LMR");
        Checks.succeeds("dat_lmr_query after a refused free", lmr::query);
        rmr.unbind(l.epA(), 2, Dat.COMPLETION_DEFAULT);
        bound(l.a(), 2);
        Checks.succeeds("dat_lmr_free after unbind", lmr::free);
        LocalMemoryRegion lmr2 = l.a().lmr(4096, FILL);
        RemoteMemoryRegion rmr2 = l.a().pz.createRmr();
        rmr2.bind(lmr2, 0, 4096, Dat.MEM_PRIV_ALL, VaType.VA, l.epA(), 3, Dat.COMPLETION_DEFAULT);
        bound(l.a(), 3);
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_lmr_free with a bound RMR", lmr2::free);
        rmr2.free();
        Checks.succeeds("dat_lmr_free after dat_rmr_free", lmr2::free);
        Events.none(l.a().reqEvd, rig.grace(), "after the binds");
    }

    @Conformance("LMR_02")
    public void freeLeavesConsumerMemoryUsable(Rig rig) {
        Link l = Link.open(rig);
        MemorySegment seg = rig.segment(4096, FILL);
        LocalMemoryRegion lmr = l.b().lmr(seg, Dat.MEM_PRIV_ALL);
        LocalMemoryRegion src = l.a().lmr(4096, (byte) 0);
        Bytes.pattern(src.segment(), 3);
        l.epA().postRdmaWrite(List.of(Link.local(src, 0, 4096)), 1, Link.remote(lmr, 0, 4096), Dat.COMPLETION_DEFAULT);
        Events.allStatus(Events.completions(l.a().reqEvd, List.of(1L), rig, "of the RDMA Write"), DtoStatus.SUCCESS,
                "RDMA Write");
        lmr.free();
        Bytes.same(Bytes.snapshot(src.segment()), seg, "the memory after dat_lmr_free");
        Checks.check(lmr.segment().byteSize() == 4096, "the LMR's segment changed size after free");
        Bytes.same(Bytes.snapshot(src.segment()), lmr.segment(), "the LMR's segment after free");
        seg.set(ValueLayout.JAVA_BYTE, 7, (byte) 0x42);
        seg.fill((byte) 0x11);
        Bytes.all(seg, (byte) 0x11, "the memory written by the consumer after free");
        LocalMemoryRegion again = l.b().lmr(seg, Dat.MEM_PRIV_ALL);
        Checks.succeeds("dat_lmr_free of a region registered again", again::free);
    }

    @Conformance("LMR_03")
    public void everyOperationOnFreedLmrFailsInvalidHandle(Rig rig) {
        Side a = rig.pair()[0];
        LocalMemoryRegion lmr = a.lmr(4096, FILL);
        lmr.free();
        DatReturnType ih = DatReturnType.INVALID_HANDLE;
        DatReturnSubtype sub = DatReturnSubtype.INVALID_HANDLE_LMR;
        Checks.check(lmr.isFreed(), "the freed LMR does not say it is freed");
        Checks.fails(ih, sub, "dat_lmr_query", lmr::query);
        Checks.fails(ih, sub, "the lmr_context of a freed LMR", lmr::lmrContext);
        Checks.fails(ih, sub, "the rmr_context of a freed LMR", lmr::rmrContext);
        Checks.fails(ih, sub, "dat_get_handle_type", lmr::handleType);
        Checks.fails(ih, sub, "dat_set_consumer_context", () -> lmr.setConsumerContext("x"));
        Checks.fails(ih, sub, "dat_get_consumer_context", lmr::consumerContext);
        Checks.fails(ih, sub, "a second dat_lmr_free", lmr::free);
    }

    @Conformance("LMR_04")
    public void dtoNamingFreedLmrFailsProtection(Rig rig) {
        String[] kinds = {"send", "receive", "RDMA Write", "RDMA Read"};
        for (String kind : kinds) {
            Link l = Link.open(rig);
            LocalMemoryRegion freed = l.a().lmr(1024, FILL);
            LocalMemoryRegion peer = l.b().lmr(1024, (byte) 0x33);
            LocalMemoryRegion peerSink = l.b().lmr(1024, FILL);
            var iov = List.of(Link.local(freed, 0, 1024));
            RmrTriplet target = Link.remote(kind.equals("RDMA Write") ? peerSink : peer, 0, 1024);
            freed.free();
            if (kind.equals("send")) {
                l.epB().postRecv(List.of(Link.local(peerSink, 0, 1024)), 9, Dat.COMPLETION_DEFAULT);
            }
            DatException sync = Checks.attempt(kind + " naming a freed LMR", () -> {
                switch (kind) {
                    case "send" -> l.epA().postSend(iov, 1, Dat.COMPLETION_DEFAULT);
                    case "receive" -> l.epA().postRecv(iov, 1, Dat.COMPLETION_DEFAULT);
                    case "RDMA Write" -> l.epA().postRdmaWrite(iov, 1, target, Dat.COMPLETION_DEFAULT);
                    default -> l.epA().postRdmaRead(iov, 1, target, Dat.COMPLETION_DEFAULT);
                }
            });
            if (sync != null) {
                Checks.equal(DatReturnType.PROTECTION_VIOLATION, sync.type(), kind + " naming a freed LMR failed sync");
            } else {
                if (kind.equals("receive")) {
                    LocalMemoryRegion src = l.b().lmr(1024, (byte) 0x77);
                    l.epB().postSend(List.of(Link.local(src, 0, 1024)), 2, Dat.COMPLETION_DEFAULT);
                }
                var evd = kind.equals("receive") ? l.a().recvEvd : l.a().reqEvd;
                var got = Events.completions(evd, List.of(1L), rig, "of a " + kind + " naming a freed LMR");
                Events.allStatus(got, DtoStatus.LOCAL_PROTECTION, kind + " naming a freed LMR");
            }
            Bytes.all(freed.segment(), FILL, "the freed LMR's memory after a " + kind);
            Bytes.all(peerSink.segment(), FILL, "the peer's memory after a " + kind + " naming a freed LMR");
        }
        repostAfterFreeFailsProtection(rig);
    }

    /**
     * A segment list that has served a DTO, posted again after its LMR was freed: the provider may
     * not go by what it found of the list the first time.
     */
    private static void repostAfterFreeFailsProtection(Rig rig) {
        for (String kind : new String[] {"send", "receive"}) {
            Link l = Link.open(rig);
            LocalMemoryRegion lmr = l.a().lmr(64, (byte) 0x3C);
            LocalMemoryRegion peer = l.b().lmr(1024, FILL);
            var iov = List.of(Link.local(lmr, 0, 64));
            var evd = kind.equals("send") ? l.a().reqEvd : l.a().recvEvd;
            if (kind.equals("send")) {
                l.epB().postRecv(List.of(Link.local(peer, 0, 64)), 8, Dat.COMPLETION_DEFAULT);
                l.epB().postRecv(List.of(Link.local(peer, 512, 64)), 9, Dat.COMPLETION_DEFAULT);
                l.epA().postSend(iov, 1, Dat.COMPLETION_DEFAULT);
            } else {
                l.epA().postRecv(iov, 1, Dat.COMPLETION_DEFAULT);
                l.epB().postSend(List.of(Link.local(peer, 0, 64)), 8, Dat.COMPLETION_DEFAULT);
            }
            Events.allStatus(Events.completions(evd, List.of(1L), rig, "of a " + kind + " before the free"),
                    DtoStatus.SUCCESS, kind + " before the free");
            lmr.free();
            DatException sync = Checks.attempt(kind + " of the same list after the free", () -> {
                if (kind.equals("send")) {
                    l.epA().postSend(iov, 2, Dat.COMPLETION_DEFAULT);
                } else {
                    l.epA().postRecv(iov, 2, Dat.COMPLETION_DEFAULT);
                }
            });
            if (sync != null) {
                Checks.equal(DatReturnType.PROTECTION_VIOLATION, sync.type(), kind + " after the free failed sync");
                continue;
            }
            if (kind.equals("receive")) {
                peer.segment().asSlice(512, 64).fill((byte) 0x77);
                l.epB().postSend(List.of(Link.local(peer, 512, 64)), 9, Dat.COMPLETION_DEFAULT);
            }
            Events.allStatus(Events.completions(evd, List.of(2L), rig, "of a " + kind + " after the free"),
                    DtoStatus.LOCAL_PROTECTION, kind + " of the same list after the free");
            Bytes.all(lmr.segment(), kind.equals("send") ? (byte) 0x3C : FILL,
                    "the freed LMR's memory after a " + kind);
            if (kind.equals("send")) {
                Bytes.all(peer.segment().asSlice(512, 64), FILL, "the peer's memory after a send naming a freed LMR");
            }
        }
    }

    @Conformance("LMR_05")
    public void remoteRdmaToFreedLmrFailsRemoteAccessAndBreaks(Rig rig) {
        for (String kind : new String[] {"RDMA Write", "RDMA Read"}) {
            Link l = Link.open(rig);
            MemorySegment target = rig.segment(4096, FILL);
            LocalMemoryRegion lmr = l.b().lmr(target, Dat.MEM_PRIV_ALL);
            RmrTriplet stale = Link.remote(lmr, 0, 4096);
            Checks.check(stale.rmrContext() != 0, "an LMR with remote privileges has rmr_context 0");
            lmr.free();
            LocalMemoryRegion local = l.a().lmr(4096, (byte) 0x66);
            remoteFailure(rig, l, kind, local, stale, "naming a freed LMR's rmr_context");
            Bytes.all(target, FILL, "the freed LMR's memory after a remote " + kind);
            Bytes.all(local.segment(), (byte) 0x66, "the initiator's memory after a failed " + kind);
        }
        skipIfNoRemoteAccessStatus(rig);
    }

    /** Ends a case whose other checks passed with SKIP where the provider cannot report REMOTE_ACCESS. */
    private static void skipIfNoRemoteAccessStatus(Rig rig) {
        String missing = rig.fixture().noRemoteAccessStatus();
        if (missing != null) {
            throw new Skip("REMOTE_ACCESS not reported (the refused DTO completed FLUSHED): " + missing
                    + "; the broken connection and the untouched memory were checked");
        }
    }

    /** Posts the RDMA and checks REMOTE_ACCESS at the initiator and a broken connection. */
    private static void remoteFailure(Rig rig, Link l, String kind, LocalMemoryRegion local, RmrTriplet remote,
                                      String what) {
        var iov = List.of(Link.local(local, 0, remote.length()));
        if (kind.equals("RDMA Write")) {
            l.epA().postRdmaWrite(iov, 1, remote, Dat.COMPLETION_DEFAULT);
        } else {
            l.epA().postRdmaRead(iov, 1, remote, Dat.COMPLETION_DEFAULT);
        }
        var got = Events.completions(l.a().reqEvd, List.of(1L), rig, "of a " + kind + " " + what);
        if (rig.fixture().noRemoteAccessStatus() == null) {
            Events.allStatus(got, DtoStatus.REMOTE_ACCESS, kind + " " + what);
        } else {
            for (var d : got.values()) {
                Checks.oneOf(Set.of(DtoStatus.REMOTE_ACCESS, DtoStatus.FLUSHED), d.status(), kind + " " + what
                        + " (the provider reports no REMOTE_ACCESS)");
            }
        }
        Events.connection(l.a().connEvd, EventNumber.CONNECTION_BROKEN, l.epA(), rig.eventTimeout(),
                "at the initiator after a " + kind + " " + what);
        Checks.state(l.epA(), EpState.DISCONNECTED, "the initiator after the connection broke");
        Events.connectionOneOf(l.b().connEvd, Set.of(EventNumber.CONNECTION_BROKEN,
                EventNumber.CONNECTION_DISCONNECTED), l.epB(), rig.eventTimeout(), "at the target after a " + kind + " " + what);
        Checks.state(l.epB(), EpState.DISCONNECTED, "the target after the connection broke");
        Events.none(l.a().connEvd, rig.grace(), "after BROKEN");
    }

    @Conformance("LMR_06")
    public void outOfBoundsOrUnprivilegedRdmaFailsAndTouchesNothingOutside(Rig rig) {
        int guard = 1024;
        int size = 4096;
        record Attempt(String kind, String why, Set<MemPriv> privileges, long offset, long length) {
        }
        List<Attempt> attempts = List.of(
                new Attempt("RDMA Write", "past the end of the LMR", Dat.MEM_PRIV_ALL, size - 16, 64),
                new Attempt("RDMA Read", "past the end of the LMR", Dat.MEM_PRIV_ALL, size - 16, 64),
                new Attempt("RDMA Write", "before the start of the LMR", Dat.MEM_PRIV_ALL, -16, 64),
                new Attempt("RDMA Write", "to an LMR without remote write", EnumSet.of(MemPriv.LOCAL_READ,
                        MemPriv.LOCAL_WRITE, MemPriv.REMOTE_READ), 0, 64),
                new Attempt("RDMA Read", "from an LMR without remote read", EnumSet.of(MemPriv.LOCAL_READ,
                        MemPriv.LOCAL_WRITE, MemPriv.REMOTE_WRITE), 0, 64));
        for (Attempt at : attempts) {
            Link l = Link.open(rig);
            MemorySegment whole = rig.segment(size + 2L * guard, FILL);
            LocalMemoryRegion lmr = l.b().lmr(whole.asSlice(guard, size), at.privileges());
            var p = lmr.query();
            RmrTriplet remote = new RmrTriplet(p.rmrContext(), p.registeredAddress() + at.offset(), at.length());
            MemorySegment localWhole = rig.segment(at.length() + 2L * guard, (byte) 0x66);
            LocalMemoryRegion local = l.a().lmr(localWhole.asSlice(guard, at.length()), Dat.MEM_PRIV_ALL);
            String what = at.why();
            remoteFailure(rig, l, at.kind(), local, remote, what);
            Bytes.all(whole.asSlice(0, guard), FILL, "the bytes before the target LMR after a " + at.kind() + " " + what);
            Bytes.all(whole.asSlice(guard + size, guard), FILL, "the bytes after the target LMR after a " + at.kind()
                    + " " + what);
            if (at.privileges().contains(MemPriv.REMOTE_WRITE)) {
                Bytes.all(localWhole.asSlice(0, guard), (byte) 0x66, "the bytes before the local sink");
                Bytes.all(localWhole.asSlice(guard + at.length(), guard), (byte) 0x66, "the bytes after the local sink");
            } else {
                Bytes.all(whole, FILL, "the LMR without remote write after an " + at.kind());
            }
        }
        RemoteMemoryRegion probe = DisconnectCases.rmrOrNull(rig.pair()[0], rig);
        if (probe == null) {
            rig.note("RMR bounds not covered: the provider has no RMRs");
            skipIfNoRemoteAccessStatus(rig);
            return;
        }
        Link l = Link.open(rig);
        MemorySegment whole = rig.segment(size, FILL);
        LocalMemoryRegion lmr = l.b().lmr(whole, Dat.MEM_PRIV_ALL);
        RemoteMemoryRegion rmr = l.b().pz.createRmr();
        int ctx = rmr.bind(lmr, guard, guard, Dat.MEM_PRIV_ALL, VaType.VA, l.epB(), 5, Dat.COMPLETION_DEFAULT);
        bound(l.b(), 5);
        long base = lmr.query().registeredAddress() + guard;
        LocalMemoryRegion local = l.a().lmr(64, (byte) 0x66);
        remoteFailure(rig, l, "RDMA Write", local, new RmrTriplet(ctx, base + guard - 16, 64), "past the end of an RMR");
        Bytes.all(whole.asSlice(0, guard), FILL, "the LMR bytes before the RMR");
        Bytes.all(whole.asSlice(2L * guard, size - 2L * guard), FILL, "the LMR bytes after the RMR");
        Events.none(l.b().reqEvd, Duration.ofMillis(1), "after the RMR bind");
        skipIfNoRemoteAccessStatus(rig);
    }
}
