package org.jdapl.conformance.cases;

import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

import org.jdapl.conformance.Conformance;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Counters;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdCounter;
import org.jdapl.dat.IaCounter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProviderAttributes;

/** EXT_09: the counters of IA, EP and EVD match the operations a case made. */
public final class CounterCases {
    private static <C extends Enum<C>> void expect(Counters<C> counters, C counter, long value, String of) {
        Checks.equal(value, counters.get(counter), of + " " + counters.byName().keySet().stream()
                .filter(n -> n.endsWith("_" + counter.name())).findFirst().orElse(counter.name()));
    }

    @Conformance("EXT_09")
    public void countersMatchTheOperations(Rig rig) {
        Side[] s = rig.pair();
        Extended.require(s[0], ProviderAttributes.DAT_COUNTERS);
        Side a = s[0];
        Side b = s[1];
        for (Side side : s) {
            side.ia.queryCounters(true);
            side.ia.queryEpCounters(true);
            side.ia.queryEvdCounters(true);
        }
        Link link = Link.connect(a, b);
        LocalMemoryRegion src = a.lmr(4096, (byte) 1);
        LocalMemoryRegion dst = b.lmr(4096, (byte) 0);
        for (int i = 0; i < 5; i++) {
            link.epB().postRecv(List.of(Link.local(dst, 100L * i, 100)), i, Set.of());
        }
        for (int i = 0; i < 5; i++) {
            link.epA().postSend(List.of(Link.local(src, 0, 64)), i, Set.of());
        }
        for (int i = 0; i < 3; i++) {
            link.epA().postRdmaWrite(List.of(Link.local(src, 0, 32)), 10 + i, Link.remote(dst, 1024, 32), Set.of());
        }
        for (int i = 0; i < 8; i++) {
            Events.next(a.reqEvd, rig.eventTimeout(), "for request " + i);
        }
        long deadline = System.nanoTime() + rig.eventTimeout().toNanos();
        while (b.recvEvd.count() < 5) {
            Checks.check(System.nanoTime() < deadline, "the 5 receives did not complete within " + rig.eventTimeout());
            LockSupport.parkNanos(1_000_000);
        }
        b.recvEvd.queryCounters(true);
        for (int i = 0; i < 5; i++) {
            Checks.check(b.recvEvd.dequeue().isPresent(), "receive " + i + " was counted but cannot be dequeued");
        }
        Checks.check(b.recvEvd.dequeue().isEmpty(), "a sixth receive completion");

        Counters<EvdCounter> evd = b.recvEvd.queryCounters(false);
        expect(evd, EvdCounter.DEQUEUE, 6, "the receive EVD's");
        expect(evd, EvdCounter.DEQUEUE_FOUND, 5, "the receive EVD's");
        expect(evd, EvdCounter.DEQUEUE_NOT_FOUND, 1, "the receive EVD's");
        Counters<EpCounter> sender = link.epA().queryCounters(false);
        expect(sender, EpCounter.CONNECT, 1, "the active EP's");
        expect(sender, EpCounter.POST_SEND, 5, "the active EP's");
        expect(sender, EpCounter.POST_SEND_DATA, 5 * 64, "the active EP's");
        expect(sender, EpCounter.POST_WRITE, 3, "the active EP's");
        expect(sender, EpCounter.POST_WRITE_DATA, 3 * 32, "the active EP's");
        expect(sender, EpCounter.RECV, 0, "the active EP's");
        Counters<EpCounter> receiver = link.epB().queryCounters(false);
        expect(receiver, EpCounter.POST_RECV, 5, "the passive EP's");
        expect(receiver, EpCounter.POST_RECV_DATA, 500, "the passive EP's");
        expect(receiver, EpCounter.RECV, 5, "the passive EP's");
        expect(receiver, EpCounter.RECV_DATA, 5 * 64, "the passive EP's");
        expect(receiver, EpCounter.POST_SEND, 0, "the passive EP's");
        Counters<IaCounter> ia = a.ia.queryCounters(false);
        expect(ia, IaCounter.EP_CREATE, 1, "the active IA's");
        expect(ia, IaCounter.LMR_CREATE, 1, "the active IA's");
        expect(ia, IaCounter.EP_FREE, 0, "the active IA's");
        Counters<IaCounter> passiveIa = b.ia.queryCounters(false);
        expect(passiveIa, IaCounter.PSP_CREATE, 1, "the passive IA's");
        expect(passiveIa, IaCounter.PSP_FREE, 1, "the passive IA's");
        expect(passiveIa, IaCounter.SP_CR, 1, "the passive IA's");
        expect(passiveIa, IaCounter.SP_CR_ACCEPTED, 1, "the passive IA's");

        link.epA().disconnect(CloseFlag.ABRUPT);
        Events.connection(a.connEvd, EventNumber.CONNECTION_DISCONNECTED, link.epA(), rig.eventTimeout(),
                "at the active side");
        link.epA().free();
        expect(a.ia.queryCounters(false), IaCounter.EP_FREE, 1, "the active IA's");
        Counters<EpCounter> totals = a.ia.queryEpCounters(false);
        expect(totals, EpCounter.POST_SEND, 5, "the active IA's EP totals, with the freed EP,");
        expect(totals, EpCounter.DISCONNECT, 1, "the active IA's EP totals, with the freed EP,");

        Counters<EpCounter> beforeReset = link.epB().queryCounters(true);
        expect(beforeReset, EpCounter.RECV, 5, "the passive EP's (query with reset)");
        expect(link.epB().queryCounters(false), EpCounter.RECV, 0, "the passive EP's after a reset");
        expect(a.ia.queryEpCounters(true), EpCounter.POST_SEND, 5, "the active IA's EP totals (query with reset)");
        expect(a.ia.queryEpCounters(false), EpCounter.POST_SEND, 0, "the active IA's EP totals after a reset");
    }
}
