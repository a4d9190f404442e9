package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jdapl.conformance.Conformance;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProviderAttributes;

/** EXT_05..EXT_07: RDMA Write with immediate data, its order with sends, and flushes of extended DTOs. */
public final class ImmediateCases {
    @Conformance("EXT_05")
    public void writeWithImmediateConsumesExactlyOneReceive(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_IB_IMMED_DATA);
        Link link = Link.connect(s[0], s[1]);
        MemorySegment sink = rig.segment(256, (byte) 0);
        LocalMemoryRegion sinkLmr = s[1].lmr(sink, EnumSet.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE,
                MemPriv.REMOTE_WRITE, MemPriv.REMOTE_READ));
        MemorySegment recvBytes = rig.segment(128, (byte) 0x55);
        LocalMemoryRegion recvLmr = s[1].lmr(recvBytes, org.jdapl.dat.Dat.MEM_PRIV_ALL);
        link.epB().postRecv(List.of(Link.local(recvLmr, 0, 64)), 10, Set.of());
        link.epB().postRecv(List.of(Link.local(recvLmr, 64, 64)), 11, Set.of());
        MemorySegment source = rig.segment(128, (byte) 0);
        Bytes.pattern(source, 7);
        byte[] sent = Bytes.snapshot(source);
        LocalMemoryRegion sourceLmr = s[0].lmr(source, org.jdapl.dat.Dat.MEM_PRIV_ALL);

        link.epA().postRdmaWriteWithImmediate(List.of(Link.local(sourceLmr, 0, 128)), 1,
                Link.remote(sinkLmr, 64, 128), 0xfeedbeef, Set.of());
        DatEvent.ExtendedDtoCompletion sinkSide = Extended.completion(s[1].recvEvd, rig.eventTimeout(),
                "at the sink of the RDMA Write with immediate data");
        Checks.equal(10L, sinkSide.cookie(), "the receive the write consumed");
        Checks.equal(DtoStatus.SUCCESS, sinkSide.status(), "the sink's completion");
        Checks.equal(ExtensionType.RDMA_WRITE_IMMED_DATA, sinkSide.type(), "the sink's extension type");
        Checks.equal(0xfeedbeef, sinkSide.immediateData(), "the immediate data");
        Checks.equal(128L, sinkSide.transferredLength(), "the length the sink's completion reports");
        Bytes.same(sent, sink.asSlice(64, 128), "the sink after the RDMA Write with immediate data");
        Bytes.all(sink.asSlice(0, 64), (byte) 0, "the sink's bytes before the target");
        Bytes.all(recvBytes, (byte) 0x55, "the consumed receive's buffer");
        DatEvent.ExtendedDtoCompletion request = Extended.completion(s[0].reqEvd, rig.eventTimeout(),
                "at the requester");
        Checks.equal(ExtensionType.RDMA_WRITE_IMMED, request.type(), "the requester's extension type");
        Checks.equal(DtoStatus.SUCCESS, request.status(), "the requester's completion");
        Checks.equal(1L, request.cookie(), "the requester's cookie");
        Events.none(s[1].recvEvd, rig.grace(), "after one RDMA Write with immediate data");

        link.epA().postSend(List.of(Link.local(sourceLmr, 0, 16)), 2, Set.of());
        DatEvent next = Events.next(s[1].recvEvd, rig.eventTimeout(), "for the send after the write");
        Checks.check(next instanceof DatEvent.DtoCompletion d && d.cookie() == 11
                && d.operation() == DtoOperation.RECEIVE && d.transferredLength() == 16,
                "the send after the write should take the second receive (11), got " + Events.describe(next));
    }

    @Conformance("EXT_06")
    public void immediateDataArrivesInOrderWithSends(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_IB_IMMED_DATA);
        Link link = Link.connect(s[0], s[1]);
        int n = 40;
        LocalMemoryRegion recvLmr = s[1].lmr(64L * n, (byte) 0);
        for (int i = 0; i < n; i++) {
            link.epB().postRecv(List.of(Link.local(recvLmr, 64L * i, 64)), 100 + i, Set.of());
        }
        MemorySegment source = rig.segment(16L * n, (byte) 0);
        for (int i = 0; i < n; i++) {
            source.asSlice(16L * i, 16).fill((byte) i);
        }
        LocalMemoryRegion sourceLmr = s[0].lmr(source, org.jdapl.dat.Dat.MEM_PRIV_ALL);
        LocalMemoryRegion sink = s[1].lmr(16L * n, (byte) 0);
        Endpoint ep = link.epA();
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0) {
                ep.postSend(List.of(Link.local(sourceLmr, 16L * i, 16)), i, Set.of());
            } else {
                ep.postRdmaWriteWithImmediate(List.of(Link.local(sourceLmr, 16L * i, 16)), i,
                        Link.remote(sink, 16L * i, 16), 1000 + i, Set.of());
            }
        }
        for (int i = 0; i < n; i++) {
            DatEvent e = Events.next(s[1].recvEvd, rig.eventTimeout(), "for receive " + (100 + i));
            if (i % 2 == 0) {
                Checks.check(e instanceof DatEvent.DtoCompletion d && d.cookie() == 100 + i
                        && d.status() == DtoStatus.SUCCESS && d.transferredLength() == 16,
                        "receive " + (100 + i) + " should take send " + i + ", got " + Events.describe(e));
            } else {
                Checks.check(e instanceof DatEvent.ExtendedDtoCompletion x && x.cookie() == 100 + i
                        && x.type() == ExtensionType.RDMA_WRITE_IMMED_DATA && x.immediateData() == 1000 + i,
                        "receive " + (100 + i) + " should take the write with immediate data " + (1000 + i)
                                + ", got " + Events.describe(e));
            }
        }
        for (int i = 0; i < n; i++) {
            DatEvent e = Events.next(s[0].reqEvd, rig.eventTimeout(), "for request " + i);
            Checks.equal(DtoStatus.SUCCESS, Events.status(e), "request " + i);
        }
    }

    @Conformance("EXT_07")
    public void disconnectFlushesExtendedDtosOnce(Rig rig) {
        Side[] s = rig.pair();
        ProviderAttributes pa = s[0].ia.query().provider();
        if (!pa.offers(ProviderAttributes.DAT_IB_IMMED_DATA) && !pa.offers(ProviderAttributes.DAT_IB_FETCH_AND_ADD)) {
            throw new org.jdapl.conformance.Skip("neither DAT_IB_IMMED_DATA nor DAT_IB_FETCH_AND_ADD offered by this "
                    + "provider");
        }
        Link link = Link.connect(s[0], s[1]);
        LocalMemoryRegion target = Extended.atomicLmr(s[1], 64, (byte) 0);
        LocalMemoryRegion local = s[0].lmr(64, (byte) 0);
        boolean held = rig.fixture().canHoldTransfers();
        if (held) {
            rig.hold(s[0].ia, true);
        } else {
            rig.note("without a transfer hold: the RDMA Write with immediate data waits for a receive at the peer "
                    + "and the atomics queue behind it");
        }
        Map<Long, ExtensionType> posted = new HashMap<>();
        if (pa.offers(ProviderAttributes.DAT_IB_IMMED_DATA)) {
            link.epA().postRdmaWriteWithImmediate(List.of(Link.local(local, 16, 16)), 1, Link.remote(target, 16, 16),
                    5, Set.of());
            posted.put(1L, ExtensionType.RDMA_WRITE_IMMED);
        } else if (!held) {
            throw new org.jdapl.conformance.Skip("no transfer hold and no RDMA Write with immediate data to keep the "
                    + "atomics outstanding");
        }
        if (pa.offers(ProviderAttributes.DAT_IB_FETCH_AND_ADD)) {
            link.epA().postFetchAndAdd(1, Link.local(local, 0, 8), 2, Link.remote(target, 0, 8), Set.of());
            posted.put(2L, ExtensionType.FETCH_AND_ADD);
        }
        if (pa.offers(ProviderAttributes.DAT_IB_CMP_AND_SWAP)) {
            link.epA().postCompareAndSwap(0, 1, Link.local(local, 8, 8), 3, Link.remote(target, 8, 8), Set.of());
            posted.put(3L, ExtensionType.CMP_AND_SWAP);
        }
        link.epA().disconnect(CloseFlag.ABRUPT);
        Map<Long, DatEvent.ExtendedDtoCompletion> got = new HashMap<>();
        while (got.size() < posted.size()) {
            DatEvent.ExtendedDtoCompletion x = Extended.completion(s[0].reqEvd, rig.eventTimeout(),
                    "for the outstanding extended DTOs " + posted.keySet() + " after disconnect");
            Checks.check(posted.containsKey(x.cookie()) && got.put(x.cookie(), x) == null,
                    "an unknown or second completion: " + Events.describe(x));
            Checks.equal(posted.get(x.cookie()), x.type(), "the type of flushed DTO " + x.cookie());
            Checks.equal(DtoStatus.FLUSHED, x.status(), "the status of outstanding DTO " + x.cookie());
        }
        Events.none(s[0].reqEvd, rig.grace(), "after every outstanding extended DTO completed");
    }
}
