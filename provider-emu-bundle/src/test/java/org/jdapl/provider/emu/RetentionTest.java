package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a long-lived IA keeps of the objects it no longer uses: nothing of the EPs it freed (the EVDs
 * their completions were dequeued from drop them), nothing of the client IAs it served (the lock
 * domains a loopback connect merges do not chain up).
 */
@Timeout(120)
class RetentionTest {
    /** Client IAs a loopback server serves one after the other. */
    private static final int CLIENTS = 300;

    /**
     * A connected pair moves a send, the consumer dequeues every completion and connection event, and
     * both EPs are freed: with the EVDs still alive, neither EP stays reachable (the EVD rings dropped
     * them at dequeue, not half a ring of events later).
     */
    @Test
    void freedEpsAreNotKeptReachableByTheEvdsTheirDequeuedEventsCameFrom() {
        try (Fixture f = new Fixture()) {
            List<WeakReference<Endpoint>> eps = connectMoveAndFree(f);
            assertTrue(collected(() -> eps.stream().allMatch(r -> r.get() == null)),
                    "a freed EP is still reachable from the EVDs its dequeued events came from: "
                            + eps.stream().filter(r -> r.get() != null).count() + " of 2");
        }
    }

    private static List<WeakReference<Endpoint>> connectMoveAndFree(Fixture f) {
        Endpoint[] pair = f.connect();
        LocalMemoryRegion src = f.a.lmr(f.memory(64));
        LocalMemoryRegion dst = f.b.lmr(f.memory(64));
        pair[1].postRecv(iov(dst, 0, 64), 1, none());
        pair[0].postSend(iov(src, 0, 64), 2, none());
        assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
        assertEquals(DtoStatus.SUCCESS, f.b.nextDto().status());
        pair[0].free();
        f.b.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
        pair[1].free();
        src.free();
        dst.free();
        return List.of(new WeakReference<>(pair[0]), new WeakReference<>(pair[1]));
    }

    /**
     * A server IA on the loopback fabric serves {@value #CLIENTS} client IAs one after the other (each
     * connects, is accepted and closes): at most one of their lock domains stays reachable, so the
     * server's lock is found in a bounded number of steps whatever it served before, and nothing is
     * kept per departed client.
     */
    @Test
    void aServerIaKeepsNoLockDomainOfTheClientIasItServed() {
        EmuProvider provider = new EmuProvider();
        try (InterfaceAdapter server = provider.open(new IaSpec("server", "loopback", "", true, "test"), 16)) {
            ProtectionZone pz = server.createPz();
            EventDispatcher evd = server.createEvd(64, null, Dat.EVD_DEFAULT_FLAGS);
            PublicServicePoint psp = server.createPspAny(evd, PspFlag.CONSUMER);
            List<WeakReference<LockDomain>> domains = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                domains.add(serveOne(provider, server, pz, evd, psp.query().connQual(), i));
            }
            assertTrue(collected(() -> domains.stream().filter(r -> r.get() != null).count() <= 1),
                    domains.stream().filter(r -> r.get() != null).count() + " of the " + CLIENTS
                            + " departed client IAs' lock domains are still reachable");
            evd.query();
        }
    }

    private static WeakReference<LockDomain> serveOne(EmuProvider provider, InterfaceAdapter server, ProtectionZone pz,
                                                      EventDispatcher evd, long qual, int i) {
        Endpoint accepted;
        WeakReference<LockDomain> domain;
        try (InterfaceAdapter client = provider.open(new IaSpec("client" + i, "loopback", "", true, "test"), 16)) {
            domain = new WeakReference<>(((EmuIa) client).domain());
            EventDispatcher cevd = client.createEvd(16, null, Dat.EVD_DEFAULT_FLAGS);
            Endpoint ep = client.createEp(client.createPz(), cevd, cevd, cevd, EpAttributes.defaults());
            ep.connect(server.query().attributes().address(), qual, Fixture.WAIT, new byte[0]);
            DatEvent e = evd.waitEvent(Fixture.WAIT);
            DatEvent.ConnectionRequest cr = assertInstanceOf(DatEvent.ConnectionRequest.class, e, () -> "got " + e);
            accepted = server.createEp(pz, evd, evd, evd, EpAttributes.defaults());
            cr.request().accept(accepted, new byte[0]);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) evd.waitEvent(Fixture.WAIT)).number());
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ((DatEvent.Connection) cevd.waitEvent(Fixture.WAIT)).number());
        }
        DatEvent e = evd.waitEvent(Fixture.WAIT);
        assertEquals(EventNumber.CONNECTION_DISCONNECTED, assertInstanceOf(DatEvent.Connection.class, e,
                () -> "got " + e).number());
        accepted.free();
        return domain;
    }

    /** Whether {@code done} holds after at most a few collections. */
    private static boolean collected(BooleanSupplier done) {
        for (int i = 0; i < 20 && !done.getAsBoolean(); i++) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return done.getAsBoolean();
    }
}
