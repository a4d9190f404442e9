package org.jdapl.conformance.cases;

import java.util.List;
import org.jdapl.conformance.Conformance;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;

/**
 * The watermark cases (SRQ_*, EP_*): an SRQ's low watermark ({@code dat_srq_set_lw}) and an EP's
 * soft high watermark ({@code dat_ep_set_watermark}) raise one asynchronous event per setting on the
 * IA's asynchronous EVD, whose handle is the SRQ or the EP and whose reason is {@code dat.h}'s, or the
 * setter fails MODEL_NOT_SUPPORTED. The receives are taken by sends of the active side to a passive
 * EP created on the SRQ, one at a time, each waited for.
 */
public final class WatermarkCases {
    private static final int SLOT = 64;

    /** A connection whose passive EP takes its receives from an SRQ of {@code size} receives, all posted. */
    private record SrqLink(Rig rig, Link link, SharedReceiveQueue srq, EventDispatcher async, LocalMemoryRegion src,
                           int size) {
        static SrqLink open(Rig rig, int size) {
            Side[] s = rig.pair();
            Side a = s[0];
            Side b = s[1];
            SharedReceiveQueue srq = b.ia.createSrq(b.pz, new SrqAttributes(size, 1, 0));
            Endpoint epB = b.ia.createEpWithSrq(b.pz, b.recvEvd, b.reqEvd, b.connEvd, srq, EpAttributes.defaults());
            Link link = Link.connect(a, b, a.ep(), epB);
            LocalMemoryRegion sink = b.lmr((long) SLOT * size, (byte) 0);
            for (int i = 0; i < size; i++) {
                srq.postRecv(List.of(new LmrTriplet(sink, (long) SLOT * i, SLOT)), 1000 + i);
            }
            EventDispatcher async = b.ia.query().asyncEvd();
            Events.drainNow(async);
            return new SrqLink(rig, link, srq, async, a.lmr(SLOT, (byte) 0x5A), size);
        }

        /** Sends {@code n} messages, each completed at both ends before the next. */
        void take(int n) {
            for (int i = 0; i < n; i++) {
                long cookie = 2000 + i;
                link.epA().postSend(List.of(new LmrTriplet(src, 0, SLOT)), cookie, Dat.COMPLETION_DEFAULT);
                Events.collect(link.a().reqEvd, List.of(cookie), rig.eventTimeout(), "of a send to the SRQ's EP");
                DatEvent e = Events.next(link.b().recvEvd, rig.eventTimeout(), "receive completion at the SRQ's EP");
                Checks.check(e instanceof DatEvent.DtoCompletion d && d.ep() == link.epB(),
                        "expected a receive completion of the SRQ's EP but got " + Events.describe(e));
            }
        }

        /** Fails unless the next asynchronous event is the watermark event of {@code handle}. */
        void expect(EventNumber number, DatHandle handle, int reason, String what) {
            DatEvent e = Events.next(async, rig.eventTimeout(), number.datName() + " " + what);
            if (!(e instanceof DatEvent.AsyncError ae) || ae.number() != number) {
                throw new AssertionError(what + ": expected " + number.datName() + " but got " + Events.describe(e));
            }
            Checks.check(ae.handle() == handle, what + ": the event names " + ae.handle() + ", not " + handle);
            Checks.equal(reason, ae.reason(), "the reason of " + number.datName() + " " + what);
            Checks.check(ae.evd() == async, what + ": the event says it is of another EVD");
        }

        void none(String what) {
            Events.none(async, rig.grace(), "on the asynchronous EVD " + what);
        }
    }

    /** Sets the SRQ's low watermark; false (with a note) if the provider refuses it MODEL_NOT_SUPPORTED. */
    private static boolean setLw(Rig rig, SharedReceiveQueue srq, int lw) {
        try {
            srq.setLowWatermark(lw);
            return true;
        } catch (DatException e) {
            if (e.type() != DatReturnType.MODEL_NOT_SUPPORTED) {
                throw e;
            }
            rig.note("dat_srq_set_lw fails MODEL_NOT_SUPPORTED: the provider has no SRQ low watermark");
            return false;
        }
    }

    /** Sets the EP's watermarks; false (with a note) if the provider refuses them MODEL_NOT_SUPPORTED. */
    private static boolean setWatermark(Rig rig, Endpoint ep, int soft) {
        try {
            ep.setWatermark(soft, Dat.WATERMARK_INFINITE);
            return true;
        } catch (DatException e) {
            if (e.type() != DatReturnType.MODEL_NOT_SUPPORTED) {
                throw e;
            }
            rig.note("dat_ep_set_watermark fails MODEL_NOT_SUPPORTED: " + e.getMessage());
            return false;
        }
    }

    @Conformance("SRQ_01")
    public void srqLowWatermarkRaisesOneEventNamingTheSrq(Rig rig) {
        SrqLink l = SrqLink.open(rig, 16);
        int lw = 4;
        if (!setLw(rig, l.srq, lw)) {
            l.none("after a refused dat_srq_set_lw");
            return;
        }
        l.none("with 16 receives on the SRQ and a low watermark of " + lw);
        l.take(16 - lw);
        l.none("with as many receives on the SRQ as its low watermark");
        l.take(1);
        l.expect(EventNumber.ASYNC_SRQ_LOW_WATERMARK, l.srq, Dat.SRQ_LOW_WATERMARK_EVENT,
                "once the receives on the SRQ dropped below its low watermark");
        l.none("after the low watermark event");
    }

    @Conformance("SRQ_02")
    public void srqLowWatermarkFiresOncePerSettingAndDuringTheCall(Rig rig) {
        SrqLink l = SrqLink.open(rig, 12);
        if (!setLw(rig, l.srq, 10)) {
            return;
        }
        l.take(3);
        l.expect(EventNumber.ASYNC_SRQ_LOW_WATERMARK, l.srq, Dat.SRQ_LOW_WATERMARK_EVENT, "with 9 receives left");
        l.take(2);
        l.none("while the receives keep dropping under the same setting");
        l.srq.setLowWatermark(8);
        l.expect(EventNumber.ASYNC_SRQ_LOW_WATERMARK, l.srq, Dat.SRQ_LOW_WATERMARK_EVENT,
                "during dat_srq_set_lw(8) with 7 receives on the SRQ");
        l.none("after the event of the call");
        l.srq.setLowWatermark(7);
        l.none("after dat_srq_set_lw(7) with 7 receives on the SRQ");
        l.take(1);
        l.expect(EventNumber.ASYNC_SRQ_LOW_WATERMARK, l.srq, Dat.SRQ_LOW_WATERMARK_EVENT,
                "with 6 receives left under a low watermark of 7");
        l.srq.setLowWatermark(Dat.SRQ_LW_DEFAULT);
        l.take(1);
        l.none("with the low watermark set to DAT_SRQ_LW_DEFAULT (none)");
    }

    @Conformance("SRQ_03")
    public void srqLowWatermarkOutOfRangeFailsAndQueryShowsTheSetting(Rig rig) {
        Side b = rig.pair()[1];
        SharedReceiveQueue srq = b.ia.createSrq(b.pz, new SrqAttributes(8, 1, 2));
        Checks.equal(2, srq.query().lowWatermark(), "the low watermark of the SRQ's attributes");
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "dat_srq_set_lw over max_recv_dtos",
                () -> srq.setLowWatermark(9));
        Checks.fails(DatReturnType.INVALID_PARAMETER, null, "dat_srq_set_lw(-1)", () -> srq.setLowWatermark(-1));
        Checks.equal(2, srq.query().lowWatermark(), "the low watermark after refused settings");
        if (setLw(rig, srq, 8)) {
            Checks.equal(8, srq.query().lowWatermark(), "the low watermark after dat_srq_set_lw(8)");
        }
    }

    @Conformance("EP_01")
    public void epSoftHighWatermarkRaisesOneEventNamingTheEp(Rig rig) {
        SrqLink l = SrqLink.open(rig, 12);
        Endpoint ep = l.link.epB();
        if (!setWatermark(rig, ep, 3)) {
            l.take(4);
            l.none("after a refused dat_ep_set_watermark");
            return;
        }
        l.none("with no receive taken and a soft high watermark of 3");
        l.take(3);
        l.none("with as many receives taken as the soft high watermark");
        l.take(1);
        l.expect(EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK, ep, Dat.SRQ_SOFT_HIGH_WATERMARK_EVENT,
                "once the EP took more receives than its soft high watermark");
        l.take(2);
        l.none("while the EP keeps taking receives under the same setting");
    }

    @Conformance("EP_02")
    public void epSoftHighWatermarkIsRearmedBySettingAndFiresDuringTheCall(Rig rig) {
        SrqLink l = SrqLink.open(rig, 12);
        Endpoint ep = l.link.epB();
        l.take(5);
        if (!setWatermark(rig, ep, 2)) {
            l.none("after a refused dat_ep_set_watermark");
            return;
        }
        l.expect(EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK, ep, Dat.SRQ_SOFT_HIGH_WATERMARK_EVENT,
                "during dat_ep_set_watermark(2) after 5 receives taken");
        ep.setWatermark(Dat.WATERMARK_INFINITE, Dat.WATERMARK_INFINITE);
        l.take(1);
        l.none("with the soft high watermark DAT_WATERMARK_INFINITE");
        ep.setWatermark(6, Dat.WATERMARK_INFINITE);
        l.none("after dat_ep_set_watermark(6) with 6 receives taken");
        l.take(1);
        l.expect(EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK, ep, Dat.SRQ_SOFT_HIGH_WATERMARK_EVENT,
                "with 7 receives taken over a soft high watermark of 6");
    }
}
