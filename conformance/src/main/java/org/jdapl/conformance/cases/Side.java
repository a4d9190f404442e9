package org.jdapl.conformance.cases;

import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.Set;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;

/**
 * One IA of a case with a PZ and its own EVDs: one for receive completions, one for request
 * completions, one for connection events and one for connection requests.
 */
public final class Side {
    /** The EVD length the kit asks for. */
    public static final int QLEN = 256;

    public final Rig rig;
    public final InterfaceAdapter ia;
    public final ProtectionZone pz;
    public final EventDispatcher recvEvd;
    public final EventDispatcher reqEvd;
    public final EventDispatcher connEvd;
    public final EventDispatcher crEvd;

    Side(Rig rig, InterfaceAdapter ia) {
        this.rig = rig;
        this.ia = ia;
        this.pz = ia.createPz();
        this.recvEvd = evd(EvdFlag.DTO);
        this.reqEvd = evd(EvdFlag.DTO, EvdFlag.RMR_BIND);
        this.connEvd = evd(EvdFlag.CONNECTION);
        this.crEvd = evd(EvdFlag.CR);
    }

    /** The address peers connect to, as the fixture names it. */
    public SocketAddress address() {
        return rig.fixture().addressOf(ia);
    }

    /** An EVD of {@link #QLEN} (or the IA's maximum) for the given streams. */
    public EventDispatcher evd(EvdFlag first, EvdFlag... more) {
        return ia.createEvd(Math.min(QLEN, ia.query().attributes().maxEvdQlen()), null, EnumSet.of(first, more));
    }

    /** An EP on the side's PZ and EVDs with default attributes. */
    public Endpoint ep() {
        return ia.createEp(pz, recvEvd, reqEvd, connEvd, EpAttributes.defaults());
    }

    /** An EP whose receive, request and connection events all go to {@code evd}. */
    public Endpoint ep(EventDispatcher evd) {
        return ia.createEp(pz, evd, evd, evd, EpAttributes.defaults());
    }

    /** A PSP (consumer-created EPs) on {@code connQual}, its requests going to the side's CR EVD. */
    public PublicServicePoint psp(long connQual) {
        return ia.createPsp(connQual, crEvd, PspFlag.CONSUMER);
    }

    /**
     * Connects {@code ep} (another side's) to this side on {@code connQual} with the long connect
     * time-out and returns the request that arrives at this side's CR EVD; {@code where} names it in
     * the failure when none comes.
     */
    public DatEvent.ConnectionRequest connectHere(Endpoint ep, long connQual, byte[] privateData, String where) {
        ep.connect(address(), connQual, rig.longConnectTimeoutMicros(), privateData);
        return Events.request(crEvd, rig.eventTimeout(), where);
    }

    /** An LMR of {@code size} fresh bytes filled with {@code fill}, with every privilege, VA addressed. */
    public LocalMemoryRegion lmr(long size, byte fill) {
        return lmr(rig.segment(size, fill), Dat.MEM_PRIV_ALL);
    }

    /** An LMR of the segment with the given privileges, VA addressed. */
    public LocalMemoryRegion lmr(MemorySegment segment, Set<MemPriv> privileges) {
        return ia.createLmr(pz, segment, privileges, VaType.VA);
    }
}
