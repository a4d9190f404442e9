package org.jdapl.conformance.cases;

import java.time.Duration;
import java.util.EnumSet;

import org.jdapl.conformance.Skip;
import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatagramEndpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.PublicServicePoint;

/** What the cases of OFED's DAT extensions share: the offered check, extended events, UD exchanges. */
public final class Extended {
    private Extended() {
    }

    /** Skips unless the side's provider names {@code attribute} as offered. */
    public static void require(Side side, String attribute) {
        if (!side.ia.query().provider().offers(attribute)) {
            throw new Skip(attribute + " not offered by this provider");
        }
    }

    /** An LMR of {@code size} bytes filled with {@code fill}, with every privilege and REMOTE_ATOMIC. */
    public static LocalMemoryRegion atomicLmr(Side side, long size, byte fill) {
        return side.lmr(side.rig.segment(size, fill), EnumSet.allOf(MemPriv.class));
    }

    /** The next event of {@code evd}, which must be an extended DTO completion. */
    public static DatEvent.ExtendedDtoCompletion completion(EventDispatcher evd, Duration timeout, String what) {
        DatEvent e = Events.next(evd, timeout, what);
        if (!(e instanceof DatEvent.ExtendedDtoCompletion x)) {
            throw new AssertionError("expected an extended DTO completion " + what + ", got " + Events.describe(e));
        }
        return x;
    }

    /** The next event of {@code evd}, which must be the UD connection event {@code number}. */
    public static DatEvent.UdConnection udEvent(EventDispatcher evd, EventNumber number, Duration timeout, String what) {
        DatEvent e = Events.next(evd, timeout, what);
        if (!(e instanceof DatEvent.UdConnection u) || u.number() != number) {
            throw new AssertionError("expected " + number.datName() + " " + what + ", got " + Events.describe(e));
        }
        return u;
    }

    /** A datagram endpoint of the side on its PZ and EVDs. */
    public static DatagramEndpoint udEp(Side side) {
        return side.ia.createDatagramEp(side.pz, side.recvEvd, side.reqEvd, side.connEvd, EpAttributes.defaults());
    }

    /**
     * A UD exchange between {@code ea} of side {@code a} and {@code eb} of side {@code b}: the request
     * arrives at {@code b}'s PSP, {@code eb} accepts it, and both get ESTABLISHED.
     *
     * @return the address handles: [0] names {@code eb} (held by {@code a}), [1] names {@code ea}
     */
    public static AddressHandle[] exchange(Side a, DatagramEndpoint ea, Side b, DatagramEndpoint eb) {
        Rig rig = a.rig;
        long q = rig.connQual();
        PublicServicePoint psp = b.psp(q);
        try {
            ea.connect(b.address(), q, rig.longConnectTimeoutMicros(), new byte[] {1, 2});
            DatEvent.UdConnection req = udEvent(b.crEvd, EventNumber.IB_UD_CONNECTION_REQUEST, rig.eventTimeout(),
                    "at the service point");
            Checks.equal(ExtensionType.UD_CONNECT_REQUEST, req.type(), "the request's extension type");
            Checks.check(req.request() != null, "the UD request event carries no request to answer");
            req.request().accept(eb, new byte[] {3});
            DatEvent.UdConnection passive = udEvent(b.connEvd, EventNumber.IB_UD_CONNECTION_ESTABLISHED,
                    rig.eventTimeout(), "at the passive side");
            DatEvent.UdConnection active = udEvent(a.connEvd, EventNumber.IB_UD_CONNECTION_ESTABLISHED,
                    rig.eventTimeout(), "at the active side");
            Checks.equal(ExtensionType.UD_PASSIVE_REMOTE_AH, passive.type(), "the passive side's extension type");
            Checks.equal(ExtensionType.UD_REMOTE_AH, active.type(), "the active side's extension type");
            Checks.check(active.remoteAh() != null && passive.remoteAh() != null, "ESTABLISHED without an address handle");
            Checks.equal(eb, passive.ep(), "the passive event's EP");
            Checks.equal(ea, active.ep(), "the active event's EP");
            return new AddressHandle[] {active.remoteAh(), passive.remoteAh()};
        } finally {
            psp.free();
        }
    }
}
