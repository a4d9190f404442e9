package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jdapl.conformance.Conformance;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrScope;
import org.jdapl.dat.VaType;

/** The cases of the other DAT objects, as in dapltest's FFT cases (OBJ_*). */
public final class ObjectCases {
    private static final byte[] NONE = new byte[0];
    private static final byte FILL = (byte) 0xC3;

    @Conformance("OBJ_01")
    public void iaCloseAbruptFreesGracefulRefusesLiveObjects(Rig rig) {
        try (IaPair pair = rig.fixture().openPair()) {
            InterfaceAdapter ia = pair.first();
            Checks.succeeds("dat_ia_query of an open IA", ia::query);
            ia.close(CloseFlag.GRACEFUL);
            Checks.check(ia.isFreed(), "a gracefully closed IA does not say it is closed");
            Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_IA, "dat_ia_query after close",
                    ia::query);
            Checks.fails(DatReturnType.INVALID_HANDLE, null, "a second dat_ia_close", () -> ia.close(CloseFlag.ABRUPT));
            InterfaceAdapter ib = pair.second();
            ProtectionZone pz = ib.createPz();
            EventDispatcher evd = ib.createEvd(8, null, EnumSet.of(EvdFlag.DTO));
            Endpoint ep = ib.createEp(pz, evd, evd, null, EpAttributes.defaults());
            LocalMemoryRegion lmr = ib.createLmr(pz, rig.segment(4096, FILL), Dat.MEM_PRIV_ALL, VaType.VA);
            Checks.fails(DatReturnType.INVALID_STATE, null, "a graceful dat_ia_close with live objects",
                    () -> ib.close(CloseFlag.GRACEFUL));
            Checks.check(!ib.isFreed() && !pz.isFreed() && !ep.isFreed() && !lmr.isFreed() && !evd.isFreed(),
                    "a refused graceful close freed something");
            Checks.succeeds("dat_ep_query after a refused close", ep::query);
            Checks.fails(DatReturnType.INVALID_PARAMETER, null, "dat_ia_close without a flag", () -> ib.close(null));
            ib.close(CloseFlag.ABRUPT);
            Checks.check(ib.isFreed() && pz.isFreed() && ep.isFreed() && lmr.isFreed() && evd.isFreed(),
                    "an abrupt close left an object alive");
            Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_EP, "dat_ep_query after IA close",
                    ep::query);
            Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_PZ, "dat_pz_query after IA close",
                    pz::query);
            Checks.fails(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_LMR,
                    "dat_lmr_query after IA close", lmr::query);
            Checks.fails(DatReturnType.INVALID_HANDLE, null, "dat_evd_query after IA close", evd::query);
            Checks.succeeds("close() of a closed IA", ib::close);
        }
    }

    @Conformance("OBJ_02")
    public void pzFreeInUseFailsInvalidState(Rig rig) {
        Link l = Link.open(rig);
        InterfaceAdapter ia = l.a().ia;
        ProtectionZone pz = ia.createPz();
        Endpoint ep = ia.createEp(pz, l.a().recvEvd, l.a().reqEvd, l.a().connEvd, EpAttributes.defaults());
        inUse(pz, "an EP");
        ep.free();
        LocalMemoryRegion lmr = ia.createLmr(pz, rig.segment(4096, FILL), Dat.MEM_PRIV_ALL, VaType.VA);
        inUse(pz, "an LMR");
        lmr.free();
        RemoteMemoryRegion rmr;
        try {
            rmr = pz.createRmr();
        } catch (DatException e) {
            if (e.type() != DatReturnType.MODEL_NOT_SUPPORTED) {
                throw e;
            }
            rmr = null;
            rig.note("RMR use not covered: the provider has no RMRs");
        }
        if (rmr != null) {
            inUse(pz, "an RMR");
            rmr.free();
        }
        Checks.succeeds("dat_pz_free once nothing uses it", pz::free);
        Checks.check(pz.isFreed(), "the freed PZ does not say it is freed");
    }

    private static void inUse(ProtectionZone pz, String user) {
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_pz_free while " + user + " uses it", pz::free);
        Checks.check(!pz.isFreed(), "a refused free freed the PZ");
        Checks.succeeds("dat_pz_query after a refused free", pz::query);
    }

    @Conformance("OBJ_03")
    public void evdWaitTimesOutAndFreeInUseFails(Rig rig) {
        Side a = rig.pair()[0];
        EventDispatcher evd = a.evd(EvdFlag.DTO);
        for (long micros : new long[] {0, 1000, 100_000}) {
            long start = System.nanoTime();
            Checks.fails(DatReturnType.TIMEOUT_EXPIRED, null, "dat_evd_wait of " + micros + " us on an empty EVD",
                    () -> evd.waitEvent(micros));
            long took = (System.nanoTime() - start) / 1000;
            Checks.check(took >= micros, "dat_evd_wait returned TIMEOUT_EXPIRED after " + took + " us, before its "
                    + micros + " us timeout");
            Checks.check(took < micros + rig.eventTimeout().toNanos() / 1000, "dat_evd_wait of " + micros
                    + " us took " + took + " us");
        }
        Endpoint ep = a.ia.createEp(a.pz, evd, a.reqEvd, a.connEvd, EpAttributes.defaults());
        Checks.fails(DatReturnType.INVALID_STATE, null, "dat_evd_free while an EP uses it", evd::free);
        Checks.check(!evd.isFreed(), "a refused free freed the EVD");
        ep.free();
        Checks.succeeds("dat_evd_free once nothing uses it", evd::free);
        Checks.check(evd.isFreed(), "the freed EVD does not say it is freed");
    }

    @Conformance("OBJ_04")
    public void evdOverflowIsReportedNeverSilent(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        EventDispatcher sw = a.ia.createEvd(4, null, EnumSet.of(EvdFlag.SOFTWARE));
        int qlen = sw.query().qlen();
        Checks.check(qlen >= 4, "an EVD asked for 4 events holds " + qlen);
        for (int i = 0; i < qlen; i++) {
            sw.postSoftwareEvent("event-" + i);
        }
        EventDispatcher async = a.ia.query().asyncEvd();
        DatException full = Checks.attempt("the software event past the queue length",
                () -> sw.postSoftwareEvent("event-" + qlen));
        if (full != null) {
            Checks.equal(DatReturnType.QUEUE_FULL, full.type(), "posting to a full EVD");
        } else {
            DatEvent e = Events.next(async, rig.eventTimeout(), "overflow report of a software event");
            Checks.equal(EventNumber.ASYNC_ERROR_EVD_OVERFLOW, e.number(), "the async event after an overflow");
        }
        for (int i = 0; i < qlen; i++) {
            DatEvent e = Events.next(sw, rig.eventTimeout(), "software event " + i);
            Checks.check(e instanceof DatEvent.Software sev && ("event-" + i).equals(sev.pointer()),
                    "software event " + i + " came back as " + Events.describe(e));
        }
        EventDispatcher small = a.ia.createEvd(4, null, EnumSet.of(EvdFlag.DTO));
        int dqlen = small.query().qlen();
        Endpoint ep = a.ia.createEp(a.pz, a.recvEvd, small, a.connEvd, EpAttributes.defaults());
        LocalMemoryRegion src = a.lmr(64, (byte) 1);
        LocalMemoryRegion dst = s[1].lmr(64, FILL);
        Link m = Link.connect(a, s[1], ep, s[1].ep());
        int posted = 0;
        boolean refused = false;
        for (int i = 0; i < dqlen + 4; i++) {
            DatException e = Checks.attempt("RDMA Write " + i, () -> m.epA().postRdmaWrite(List.of(Link.local(src, 0, 64)),
                    0, Link.remote(dst, 0, 64), Dat.COMPLETION_DEFAULT));
            if (e == null) {
                posted++;
            } else {
                Checks.oneOf(Set.of(DatReturnType.QUEUE_FULL, DatReturnType.INSUFFICIENT_RESOURCES), e.type(),
                        "posting past the request EVD's length");
                refused = true;
            }
        }
        try {
            Thread.sleep(rig.grace().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        }
        int delivered = Events.drainNow(small).size();
        if (posted > dqlen || delivered < posted) {
            List<DatEvent> reports = Events.drainFor(async, rig.grace());
            Checks.check(reports.stream().anyMatch(e -> e.number() == EventNumber.ASYNC_ERROR_EVD_OVERFLOW
                            && e instanceof DatEvent.AsyncError ae && ae.handle() == small),
                    posted + " completions for a request EVD of length " + dqlen + " (" + delivered
                            + " delivered) and no ASYNC_ERROR_EVD_OVERFLOW naming that EVD on the async EVD");
            Checks.check(delivered == posted || delivered >= dqlen, "only " + delivered + " of " + posted
                    + " completions delivered by an EVD of length " + dqlen);
        } else if (!refused) {
            throw new AssertionError("no overflow was produced: " + posted + " DTOs for an EVD of length " + dqlen);
        }
    }

    @Conformance("OBJ_05")
    public void emptyLmrFailsLengthErrorAndReregisterWorks(Rig rig) {
        Side a = rig.pair()[0];
        MemorySegment seg = rig.segment(4096, FILL);
        Checks.fails(DatReturnType.LENGTH_ERROR, null, "dat_lmr_create of 0 bytes",
                () -> a.lmr(seg.asSlice(0, 0), Dat.MEM_PRIV_ALL));
        LocalMemoryRegion first = a.lmr(seg, Dat.MEM_PRIV_ALL);
        first.free();
        LocalMemoryRegion second = a.lmr(seg, Dat.MEM_PRIV_ALL);
        Checks.check(second.query().registeredSize() >= 4096, "the region registered again has registered size "
                + second.query().registeredSize());
        Checks.succeeds("dat_lmr_query of the region registered again", second::query);
        second.free();
    }

    @Conformance("OBJ_06")
    public void pspQualifierInUseAndFreeStopsRequests(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        long q = rig.connQual();
        PublicServicePoint psp = b.psp(q);
        Checks.fails(DatReturnType.CONN_QUAL_IN_USE, null, "a second PSP on the same qualifier", () -> b.psp(q));
        psp.free();
        Checks.check(psp.isFreed(), "the freed PSP does not say it is freed");
        Endpoint epA = a.ep();
        epA.connect(b.address(), q, rig.longConnectTimeoutMicros(), NONE);
        Events.connection(a.connEvd, EventNumber.CONNECTION_NON_PEER_REJECTED, epA, rig.eventTimeout(),
                "for the qualifier of a freed PSP");
        Events.none(b.crEvd, rig.grace(), "at a freed PSP");
        PublicServicePoint again = b.psp(q);
        Endpoint epA2 = a.ep();
        var cr = b.connectHere(epA2, q, NONE, "at a PSP created again on the qualifier");
        Checks.check(cr.servicePoint() == again, "the request names another service point");
    }

    @Conformance("OBJ_07")
    public void sendReceiveMovesBytesAndShortReceiveFailsLength(Rig rig) {
        Link l = Link.open(rig);
        LocalMemoryRegion src = l.a().lmr(3000, (byte) 0);
        Bytes.pattern(src.segment(), 9);
        LocalMemoryRegion sink = l.b().lmr(4096, FILL);
        l.epB().postRecv(List.of(Link.local(sink, 0, 1000), Link.local(sink, 2000, 2096)), 1, Dat.COMPLETION_DEFAULT);
        l.epA().postSend(List.of(Link.local(src, 0, 1500), Link.local(src, 1500, 1500)), 2, Dat.COMPLETION_DEFAULT);
        var sent = Events.completions(l.a().reqEvd, List.of(2L), rig, "of the send");
        Events.allStatus(sent, DtoStatus.SUCCESS, "send");
        Checks.equal(DtoOperation.SEND, sent.get(2L).operation(), "operation of the send completion");
        var recv = Events.completions(l.b().recvEvd, List.of(1L), rig, "of the receive");
        Events.allStatus(recv, DtoStatus.SUCCESS, "receive");
        Checks.equal(3000L, recv.get(1L).transferredLength(), "received length");
        Checks.equal(DtoOperation.RECEIVE, recv.get(1L).operation(), "operation of the receive completion");
        byte[] data = Bytes.snapshot(src.segment());
        Bytes.same(java.util.Arrays.copyOfRange(data, 0, 1000), sink.segment().asSlice(0, 1000), "first segment");
        Bytes.all(sink.segment().asSlice(1000, 1000), FILL, "the gap between the receive segments");
        Bytes.same(java.util.Arrays.copyOfRange(data, 1000, 3000), sink.segment().asSlice(2000, 2000), "second segment");
        Bytes.all(sink.segment().asSlice(4000, 96), FILL, "the receive bytes past the message");

        Link w = Link.open(rig);
        LocalMemoryRegion wsrc = w.a().lmr(256, (byte) 0);
        Bytes.pattern(wsrc.segment(), 10);
        MemorySegment late = rig.segment(256, FILL);
        LocalMemoryRegion wsink = w.b().lmr(late, Dat.MEM_PRIV_ALL);
        w.epA().postSend(List.of(Link.local(wsrc, 0, 256)), 5, Dat.COMPLETION_DEFAULT);
        List<DatEvent> early = Events.drainFor(w.a().reqEvd, rig.grace());
        w.epB().postRecv(List.of(Link.local(wsink, 0, 256)), 6, Dat.COMPLETION_DEFAULT);
        if (early.isEmpty()) {
            Events.allStatus(Events.completions(w.a().reqEvd, List.of(5L), rig, "of a send that waited for a receive"),
                    DtoStatus.SUCCESS, "a send that waited for a receive");
            var r = Events.completions(w.b().recvEvd, List.of(6L), rig, "of the late receive");
            Events.allStatus(r, DtoStatus.SUCCESS, "the late receive");
            Bytes.same(Bytes.snapshot(wsrc.segment()), late, "data of a send that waited for a receive");
        } else {
            Checks.equal(1, early.size(), "completions of one send");
            Checks.check(Events.status(early.getFirst()) != DtoStatus.SUCCESS,
                    "a send completed SUCCESS while no receive was posted");
            for (DatEvent e : Events.drainFor(w.b().recvEvd, rig.grace())) {
                Checks.check(Events.status(e) != DtoStatus.SUCCESS, "a receive posted after the send failed got data");
            }
            Bytes.all(late, FILL, "a receive posted after the send failed");
            rig.note("a send without a receive failed " + Events.status(early.getFirst()));
        }

        Link t = Link.open(rig);
        LocalMemoryRegion big = t.a().lmr(512, (byte) 1);
        MemorySegment smallSeg = rig.segment(256 + 64, FILL);
        LocalMemoryRegion small = t.b().lmr(smallSeg.asSlice(0, 256), Dat.MEM_PRIV_ALL);
        t.epB().postRecv(List.of(Link.local(small, 0, 256)), 7, Dat.COMPLETION_DEFAULT);
        t.epA().postSend(List.of(Link.local(big, 0, 512)), 8, Dat.COMPLETION_DEFAULT);
        Events.allStatus(Events.completions(t.b().recvEvd, List.of(7L), rig, "of a receive too small"),
                DtoStatus.LOCAL_LENGTH, "a receive too small for the message");
        Events.collect(t.a().reqEvd, List.of(8L), rig.eventTimeout(), "of the send too large for the receive");
        Bytes.all(smallSeg.asSlice(256, 64), FILL, "the bytes past a receive too small");
    }

    @Conformance("OBJ_08")
    public void rdmaMovesExactlyTheNamedBytes(Rig rig) {
        Link l = Link.open(rig);
        LocalMemoryRegion src = l.a().lmr(1024, (byte) 0);
        Bytes.pattern(src.segment(), 12);
        LocalMemoryRegion target = l.b().lmr(1024, FILL);
        l.epA().postRdmaWrite(List.of(Link.local(src, 3, 40), Link.local(src, 100, 60)), 1,
                Link.remote(target, 37, 100), Dat.COMPLETION_DEFAULT);
        var w = Events.completions(l.a().reqEvd, List.of(1L), rig, "of the RDMA Write");
        Events.allStatus(w, DtoStatus.SUCCESS, "RDMA Write");
        Checks.equal(100L, w.get(1L).transferredLength(), "RDMA Write length");
        Checks.equal(DtoOperation.RDMA_WRITE, w.get(1L).operation(), "operation of the RDMA Write completion");
        byte[] s = Bytes.snapshot(src.segment());
        byte[] expected = new byte[1024];
        java.util.Arrays.fill(expected, FILL);
        System.arraycopy(s, 3, expected, 37, 40);
        System.arraycopy(s, 100, expected, 77, 60);
        Bytes.same(expected, target.segment(), "the RDMA Write target");
        LocalMemoryRegion remoteSrc = l.b().lmr(1024, (byte) 0);
        Bytes.pattern(remoteSrc.segment(), 13);
        LocalMemoryRegion sink = l.a().lmr(1024, FILL);
        l.epA().postRdmaRead(List.of(Link.local(sink, 5, 30), Link.local(sink, 500, 47)), 2,
                Link.remote(remoteSrc, 11, 77), Dat.COMPLETION_DEFAULT);
        var r = Events.completions(l.a().reqEvd, List.of(2L), rig, "of the RDMA Read");
        Events.allStatus(r, DtoStatus.SUCCESS, "RDMA Read");
        Checks.equal(77L, r.get(2L).transferredLength(), "RDMA Read length");
        Checks.equal(DtoOperation.RDMA_READ, r.get(2L).operation(), "operation of the RDMA Read completion");
        byte[] rs = Bytes.snapshot(remoteSrc.segment());
        byte[] expectedSink = new byte[1024];
        java.util.Arrays.fill(expectedSink, FILL);
        System.arraycopy(rs, 11, expectedSink, 5, 30);
        System.arraycopy(rs, 41, expectedSink, 500, 47);
        Bytes.same(expectedSink, sink.segment(), "the RDMA Read sink");
        Events.none(l.b().recvEvd, rig.grace(), "at the target of RDMA");
    }

    @Conformance("OBJ_09")
    public void softwareEventIsDequeuedIntact(Rig rig) {
        Side a = rig.pair()[0];
        EventDispatcher evd = a.ia.createEvd(16, null, EnumSet.of(EvdFlag.SOFTWARE));
        List<Object> pointers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Object p = new Object();
            pointers.add(p);
            evd.postSoftwareEvent(p);
        }
        for (int i = 0; i < 5; i++) {
            DatEvent e = i % 2 == 0 ? Events.next(evd, rig.eventTimeout(), "software event " + i)
                    : evd.dequeue().orElseThrow(() -> new AssertionError("dat_evd_dequeue found no software event"));
            Checks.check(e instanceof DatEvent.Software, "expected a software event but got " + Events.describe(e));
            Checks.check(((DatEvent.Software) e).pointer() == pointers.get(i),
                    "software event " + i + " carries another object");
            Checks.check(e.evd() == evd, "software event " + i + " names another EVD");
        }
        Checks.check(evd.dequeue().isEmpty(), "an extra event after the software events");
        EventDispatcher dtoOnly = a.evd(EvdFlag.DTO);
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "dat_evd_post_se on an EVD without the software stream",
                () -> dtoOnly.postSoftwareEvent("x"));
    }

    @Conformance("OBJ_10")
    public void queriesReturnCreationValues(Rig rig) {
        Side[] s = rig.pair();
        Side a = s[0];
        Side b = s[1];
        var iaq = a.ia.query();
        Checks.equal(a.address(), iaq.attributes().address(), "the IA address");
        Checks.check(iaq.asyncEvd() != null, "the IA has no async EVD");
        Checks.check(iaq.provider().providerName() != null && !iaq.provider().providerName().isEmpty(),
                "the provider has no name");
        Checks.equal(Dat.VERSION_MAJOR, iaq.provider().datVersionMajor(), "DAT major version");
        Checks.equal(a.ia, a.pz.query().ia(), "the PZ's IA");
        EventDispatcher evd = a.ia.createEvd(32, null, EnumSet.of(EvdFlag.DTO, EvdFlag.SOFTWARE));
        var ep = evd.query();
        Checks.equal(a.ia, ep.ia(), "the EVD's IA");
        Checks.check(ep.qlen() >= 32, "EVD qlen " + ep.qlen() + " under the 32 asked for");
        Checks.equal(EnumSet.of(EvdFlag.DTO, EvdFlag.SOFTWARE), ep.flags(), "the EVD flags");
        Checks.check(ep.cno() == null, "the EVD names a CNO it was not given");
        EpAttributes attrs = EpAttributes.defaults().withQueueDepths(16, 32);
        Endpoint e = a.ia.createEp(a.pz, a.recvEvd, a.reqEvd, a.connEvd, attrs);
        var p = e.query();
        Checks.equal(a.ia, p.ia(), "the EP's IA");
        Checks.equal(EpState.UNCONNECTED, p.state(), "the EP's state");
        Checks.equal(a.pz, p.pz(), "the EP's PZ");
        Checks.check(p.recvEvd() == a.recvEvd && p.requestEvd() == a.reqEvd && p.connectEvd() == a.connEvd,
                "the EP's EVDs differ from those it was created with");
        Checks.equal(attrs.qos(), p.attributes().qos(), "the EP's QoS");
        Checks.check(p.attributes().maxRecvDtos() >= 16 && p.attributes().maxRequestDtos() >= 32
                && p.attributes().maxMessageSize() >= attrs.maxMessageSize(),
                "the EP's attributes are below those asked for: " + p.attributes());
        long q = rig.connQual();
        PublicServicePoint psp = b.ia.createPsp(q, b.crEvd, PspFlag.CONSUMER);
        var pp = psp.query();
        Checks.equal(b.ia, pp.ia(), "the PSP's IA");
        Checks.equal(q, pp.connQual(), "the PSP's qualifier");
        Checks.check(pp.evd() == b.crEvd, "the PSP names another EVD");
        Checks.equal(PspFlag.CONSUMER, pp.flag(), "the PSP flag");
        byte[] data = rig.randomBytes(Math.min(16, a.ia.query().attributes().maxPrivateDataSize()));
        var cr = b.connectHere(e, q, data.clone(), "at the PSP").request().query();
        Checks.equal(a.address(), cr.remoteAddress(), "the CR's remote address");
        Bytes.same(data, cr.privateData(), "the CR's private data");
        MemorySegment seg = rig.segment(8192, FILL);
        Set<MemPriv> privs = EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE, MemPriv.REMOTE_READ);
        LocalMemoryRegion lmr = a.ia.createLmr(a.pz, seg, privs, VaType.VA);
        var lp = lmr.query();
        Checks.equal(a.ia, lp.ia(), "the LMR's IA");
        Checks.equal(a.pz, lp.pz(), "the LMR's PZ");
        Checks.equal(8192L, lp.length(), "the LMR's length");
        Checks.check(lp.registeredSize() >= 8192, "the LMR's registered size " + lp.registeredSize());
        Checks.equal(privs, lp.privileges(), "the LMR's privileges");
        Checks.equal(VaType.VA, lp.vaType(), "the LMR's VA type");
        Checks.check(lp.segment().address() == seg.address() && lp.segment().byteSize() == seg.byteSize(),
                "the LMR names another segment");
        RemoteMemoryRegion rmr = DisconnectCases.rmrOrNull(a, rig);
        if (rmr == null) {
            rig.note("RMR query not covered: the provider has no RMRs");
            return;
        }
        var rp = rmr.query();
        Checks.equal(a.ia, rp.ia(), "the RMR's IA");
        Checks.equal(a.pz, rp.pz(), "the RMR's PZ");
        Checks.equal(RmrScope.PZ, rp.scope(), "the scope of an RMR of dat_rmr_create");
        Checks.check(rp.lmr() == null && rp.length() == 0 && rp.rmrContext() == 0, "a new RMR is bound: " + rp);
        Checks.equal(RmrScope.EP, a.pz.createRmrForEp().query().scope(), "the scope of an RMR of dat_rmr_create_for_ep");
    }
}
