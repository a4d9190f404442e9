package org.jdapl.conformance.cases;

import java.util.List;
import java.util.Map;
import org.jdapl.conformance.Skip;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.LocalMemoryRegion;

/**
 * Request DTOs of the active side of a link kept in progress. With a fixture that can hold
 * transfers: the passive side posts a receive, the transfers of the active IA are held, and the
 * active side posts a send and an RDMA Write. Without: the active side posts a send while no
 * receive is posted at the peer, which stays outstanding until {@link #release()} posts one.
 */
public final class Stall {
    /** The cookie of the stalled send. */
    public static final long SEND = 0x5e4d;
    /** The cookie of the stalled RDMA Write (held mode only). */
    public static final long WRITE = 0x3717e;
    /** The cookie of the passive side's receive. */
    public static final long RECV = 0x7ec5;
    private static final int SIZE = 4096;
    private static final byte FILL = (byte) 0xEE;

    private final Link link;
    private final boolean held;
    private final LocalMemoryRegion recvB;
    private final LocalMemoryRegion targetB;
    private final byte[] payload;
    private boolean recvPosted;

    private Stall(Link link, boolean held, LocalMemoryRegion recvB, LocalMemoryRegion targetB, byte[] payload) {
        this.link = link;
        this.held = held;
        this.recvB = recvB;
        this.targetB = targetB;
        this.payload = payload;
    }

    /**
     * Posts the stalled requests on {@code link.epA()} and checks that none completes within the
     * grace period.
     *
     * @throws Skip if the provider completes a send without a receive at the peer at once and the
     *         fixture cannot hold transfers, so no request stays outstanding
     */
    public static Stall start(Link link) {
        Rig rig = link.a().rig;
        boolean held = rig.fixture().canHoldTransfers();
        LocalMemoryRegion src = link.a().lmr(SIZE, (byte) 0);
        Bytes.pattern(src.segment(), 11);
        LocalMemoryRegion recvB = link.b().lmr(SIZE, FILL);
        LocalMemoryRegion targetB = link.b().lmr(SIZE, FILL);
        Stall stall = new Stall(link, held, recvB, targetB, Bytes.snapshot(src.segment()));
        if (held) {
            link.epB().postRecv(List.of(Link.local(recvB, 0, SIZE)), RECV, Dat.COMPLETION_DEFAULT);
            stall.recvPosted = true;
            rig.hold(link.a().ia, true);
            link.epA().postSend(List.of(Link.local(src, 0, SIZE)), SEND, Dat.COMPLETION_DEFAULT);
            link.epA().postRdmaWrite(List.of(Link.local(src, 0, SIZE)), WRITE, Link.remote(targetB, 0, SIZE),
                    Dat.COMPLETION_DEFAULT);
        } else {
            link.epA().postSend(List.of(Link.local(src, 0, SIZE)), SEND, Dat.COMPLETION_DEFAULT);
        }
        EventDispatcher requestEvd = link.epA().query().requestEvd();
        String completed = null;
        var early = Events.drainNow(requestEvd);
        if (!early.isEmpty()) {
            completed = Events.describe(early.getFirst());
        } else {
            try {
                Events.none(requestEvd, rig.grace(), "while the requests should be in progress");
            } catch (AssertionError e) {
                completed = e.getMessage();
            }
        }
        if (completed != null) {
            if (held) {
                throw new AssertionError("a DTO completed while the fixture held transfers: " + completed);
            }
            throw new Skip("the provider completes a send without a receive at the peer at once and the fixture"
                    + " cannot hold transfers, so no request DTO stays outstanding (" + completed + ")");
        }
        return stall;
    }

    /** Whether the fixture held transfers (a send and an RDMA Write stalled) or only a send stalled. */
    public boolean held() {
        return held;
    }

    /** The cookies of the stalled requests. */
    public List<Long> cookies() {
        return held ? List.of(SEND, WRITE) : List.of(SEND);
    }

    /** Lets the stalled requests proceed: lifts the hold, or posts the receive at the peer. */
    public void release() {
        if (held) {
            link.a().rig.hold(link.a().ia, false);
        } else if (!recvPosted) {
            recvPosted = true;
            link.epB().postRecv(List.of(Link.local(recvB, 0, SIZE)), RECV, Dat.COMPLETION_DEFAULT);
        }
    }

    /** Posts the peer's receive now if it is not posted yet (no-op in held mode). */
    public void postPeerReceive() {
        if (!recvPosted) {
            recvPosted = true;
            link.epB().postRecv(List.of(Link.local(recvB, 0, SIZE)), RECV, Dat.COMPLETION_DEFAULT);
        }
    }

    /** Checks that the stalled requests' data arrived: the peer's receive completed SUCCESS with the bytes. */
    public void verifyDelivered(EventDispatcher peerRecvEvd) {
        Rig rig = link.a().rig;
        Map<Long, DatEvent.DtoCompletion> got = Events.collect(peerRecvEvd, List.of(RECV), rig.eventTimeout(),
                "of the peer's receive");
        DatEvent.DtoCompletion recv = got.get(RECV);
        Checks.equal(DtoStatus.SUCCESS, recv.status(), "the peer's receive status");
        Checks.equal((long) SIZE, recv.transferredLength(), "the peer's received length");
        Bytes.same(payload, recvB.segment(), "the peer's receive buffer");
        if (held) {
            Bytes.same(payload, targetB.segment(), "the RDMA Write target at the peer");
        }
    }

    /** Checks that no byte of the stalled requests landed at the peer. */
    public void verifyUntouched() {
        Bytes.all(recvB.segment(), FILL, "the peer's receive buffer");
        Bytes.all(targetB.segment(), FILL, "the RDMA Write target at the peer");
    }

    /** Whether the peer's receive is posted. */
    public boolean peerReceivePosted() {
        return recvPosted;
    }
}
