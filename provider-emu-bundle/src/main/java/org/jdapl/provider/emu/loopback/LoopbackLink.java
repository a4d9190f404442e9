package org.jdapl.provider.emu.loopback;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.EpQueues;
import org.jdapl.provider.emu.Link;
import org.jdapl.provider.emu.RcRules;
import org.jdapl.provider.emu.RecvRing;
import org.jdapl.provider.emu.RemoteTarget;
import org.jdapl.provider.emu.Segments;
import org.jdapl.provider.emu.SendLock;
import org.jdapl.provider.emu.WorkRequest;

import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpState;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;

/**
 * A connection between two EPs on the loopback fabric, and its data engine. Both EPs are in one lock
 * domain (the connect merged their IAs' domains), so the thread that posts a request executes it
 * directly against the peer's memory and queues, and the completion is on the EVD when the post
 * returns: post, {@link #pump}, {@link #execute}, the {@link RcRules}, the copy, the completions, top
 * to bottom in this class.
 *
 * <p>The common path shares no lock between the two ends: a send that nothing precedes and that the
 * peer's next receive takes successfully runs under the sending EP's {@link SendLock} only
 * ({@link #trySend}), and a receive is queued into the EP's {@link RecvRing} under its producer claim
 * only; completions go to the lock-free {@link org.jdapl.provider.emu.evd.EventRing}s. Everything else (RNR waits, errors, RDMA,
 * binds, SRQ receives, a held IA) goes through the request queue under the domain lock, whose
 * engine takes the sender's {@link SendLock} too, so requests execute and complete in posting order.
 * Closing the link takes both ends' send locks: a send under way finishes first, and none starts
 * after (DISC_08, DISC_16).
 *
 * <p>The request queue is processed in order: its head moves data (a send takes the peer's first
 * receive, an RDMA checks the peer's context and copies), completes, and the next follows. A send
 * that finds no receive waits (RNR) until the peer posts one or its window ends (then
 * DTO_ERR_RECEIVER_NOT_READY). Any error completion breaks the connection as on RC (DISC_03).
 */
public final class LoopbackLink extends Link {
    private final EmuEp active;
    private final EmuEp passive;
    /** The IAs of the two ends: whether one is held, and their rmr_contexts and timers. */
    private final EmuIa activeIa;
    private final EmuIa passiveIa;
    /**
     * Whether the head send of the active (passive) end waits for a receive of its peer: only then
     * does a receive posted by the peer kick that end's queue. Written only when it changes, so that
     * the hand-offs of a ping-pong read it without moving its line between CPUs.
     */
    private volatile boolean activeWaits;
    private volatile boolean passiveWaits;

    /** The link between {@code active} of {@code activeIa} and {@code passive} of {@code passiveIa}, open. */
    LoopbackLink(EmuEp active, EmuIa activeIa, EmuEp passive, EmuIa passiveIa) {
        this.active = active;
        this.activeIa = activeIa;
        this.passive = passive;
        this.passiveIa = passiveIa;
        this.open = true;
    }

    EmuEp other(EmuEp ep) {
        return ep == active ? passive : active;
    }

    /** The IA of {@code ep}, an end of this link. */
    private EmuIa ia(EmuEp ep) {
        return ep == active ? activeIa : passiveIa;
    }

    /** Whether either end's IA is held: requests wait in the queue until it is released. */
    private boolean held() {
        return activeIa.held() || passiveIa.held();
    }

    /**
     * Closes the link under both ends' send locks (domain lock held): a send moving without the domain
     * lock finishes, with its completions, before the close; none starts after it.
     *
     * <p>Behaviours: DISC_08, DISC_16: no byte moves after either side's disconnect.
     */
    @Override
    public void close() {
        SendLock a = active.queues().sendLock();
        SendLock p = passive.queues().sendLock();
        a.lock();
        try {
            p.lock();
            try {
                open = false;
            } finally {
                p.unlock();
            }
        } finally {
            a.unlock();
        }
    }

    @Override
    public void abort(EmuEp from, boolean broken) {
        close();
        other(from).connection().remoteAbort(broken);
    }

    @Override
    public boolean postsReceivesWithoutLock() {
        return true;
    }

    /** Whether the peer's head send waits for a receive (RNR; read with {@code from}'s ring claimed). */
    @Override
    public boolean awaitsReceive(EmuEp from) {
        return other(from) == active ? activeWaits : passiveWaits;
    }

    /**
     * The common send, without the domain lock: under the sender's {@link SendLock}, with the link open,
     * the EP CONNECTED, no request queued before it, neither IA held, and the peer's next receive (not
     * an SRQ's) taking it whole ({@link RcRules#acceptsAtOnce}): the receive is taken, the bytes copied,
     * both completions published. Otherwise nothing changes and the caller queues the send.
     *
     * <p>Behaviours: OBJ_07.
     */
    @Override
    public boolean trySend(EmuEp from, List<LmrTriplet> iov, long length, long cookie, int flagBits) {
        EmuEp peer = other(from);
        EpQueues receiver = peer.queues();
        if (receiver.hasSrq()) {
            return false;
        }
        // A first look at the peer's next receive before the lock, as a hint: its loads overlap the wait of
        // the lock's compare-and-set for this thread's earlier stores. The look under the lock decides.
        RecvRing ring = receiver.receives();
        if (ring.headCapacity() < length) {
            return false;
        }
        SendLock lock = from.queues().sendLock();
        lock.lock();
        try {
            if (!open || from.state() != EpState.CONNECTED || !from.requests().isEmpty()
                    || held()) {
                return false;
            }
            int slot = ring.headSlot();
            if (slot < 0) {
                return false;
            }
            List<LmrTriplet> into = ring.iovAt(slot);
            if (!RcRules.acceptsAtOnce(iov, length, ring.capacityAt(slot), into)) {
                return false;
            }
            long recvCookie = ring.cookieAt(slot);
            int recvFlags = ring.flagsAt(slot);
            ring.takeRecycling();
            Segments.copy(iov, into, length);
            peer.completeTakenRecv(recvCookie, recvFlags, DtoStatus.SUCCESS, length, DtoOperation.RECEIVE, 0);
            from.completeDto(cookie, flagBits, DtoStatus.SUCCESS, length, DtoOperation.SEND);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The common RDMA, under the domain lock and the sender's {@link SendLock}: with the link open, no
     * request queued before it, neither IA held, the local segments usable and the remote ones granted
     * (LMR_06), the bytes are copied and the RDMA completes. Otherwise nothing changes and the caller
     * queues it, where a refusal fails it as RC does. Nothing is allocated: no work request, no slice.
     *
     * <p>Behaviours: OBJ_08, LMR_06.
     */
    @Override
    public boolean tryRdma(EmuEp from, boolean read, List<LmrTriplet> iov, long length, long cookie,
                           RmrTriplet remote, int flagBits) {
        EmuEp peer = other(from);
        SendLock lock = from.queues().sendLock();
        lock.lock();
        try {
            if (!open || !from.requests().isEmpty() || held()
                    || !Segments.usable(iov)) {
                return false;
            }
            RemoteTarget target = ia(peer).contexts().target(remote.rmrContext());
            long at = target == null ? -1 : target.locate(peer, remote.targetAddress(), remote.length(),
                    read ? MemPriv.REMOTE_READ : MemPriv.REMOTE_WRITE);
            if (at < 0) {
                return false;
            }
            Segments.copy(iov, target.backing(), at, length, !read);
            from.completeDto(cookie, flagBits, DtoStatus.SUCCESS, length,
                    read ? DtoOperation.RDMA_READ : DtoOperation.RDMA_WRITE);
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void notifyDisconnect(EmuEp from) {
        other(from).connection().peerDisconnectNotification();
    }

    @Override
    public void receivePosted(EmuEp from) {
        EmuEp peer = other(from);
        if (peer == active ? activeWaits : passiveWaits) {
            peer.kick();
        }
    }

    private void waitsForReceive(EmuEp ep, boolean waits) {
        if (ep == active) {
            if (activeWaits != waits) {
                activeWaits = waits;
            }
        } else if (passiveWaits != waits) {
            passiveWaits = waits;
        }
    }

    /**
     * Processes the request queue of {@code from} against its peer as far as it can go now (domain lock
     * held), under the sender's {@link SendLock}, so that a send posted without the domain lock waits for
     * the requests before it.
     */
    @Override
    public void pump(EmuEp from) {
        EmuEp peer = other(from);
        SendLock lock = from.queues().sendLock();
        lock.lock();
        try {
            waitsForReceive(from, false);
            ArrayDeque<WorkRequest> requests = from.requests();
            while (!requests.isEmpty()) {
                if (!from.connection().linkOpen() || held()) {
                    return;
                }
                if (!execute(from, requests.peekFirst(), peer)) {
                    return;
                }
            }
        } finally {
            lock.unlock();
        }
        from.connection().tryFinishGraceful();
    }

    /** Executes the head request; false if it must wait (no receive at the peer yet). */
    private boolean execute(EmuEp from, WorkRequest wr, EmuEp peer) {
        return switch (wr) {
            case WorkRequest.Send send -> send(from, send, peer);
            case WorkRequest.Rdma rdma -> rdma(from, rdma, peer);
            case WorkRequest.Ext ext -> LoopbackExtensions.execute(from, ia(from), ext, peer, ia(peer), () -> waitsForReceive(from, true));
            case WorkRequest.Bind bind -> {
                from.requests().pollFirst();
                from.completeRequest(bind, DtoStatus.SUCCESS, 0);
                yield true;
            }
            case WorkRequest.Recv recv -> throw new IllegalStateException("a receive in the request queue");
        };
    }

    private boolean send(EmuEp from, WorkRequest.Send send, EmuEp peer) {
        if (!Segments.usable(send.iov)) {
            return from.fail(send, DtoStatus.LOCAL_PROTECTION);
        }
        RcRules.SendVerdict v = RcRules.takeReceive(peer, send.length, send.invalidate,
                send.rmrContext & 0xffff_ffffL);
        if (v.recv() == null) {
            // Say that the send waits unless a receive was queued meanwhile without the domain lock; a
            // receive queued after sees the flag (awaitsReceive) and kicks this queue.
            if (!peer.queues().awaitReceive(() -> waitsForReceive(from, true))) {
                return true;
            }
            long now = System.nanoTime();
            if (RcRules.rnrExhausted(send, now)) {
                return from.fail(send, DtoStatus.RECEIVER_NOT_READY);
            }
            RcRules.retryAtDeadline(from, send, now, TimeUnit.MILLISECONDS.toNanos(1), from::pumpRequests);
            return false;
        }
        if (v.accepted()) {
            Segments.copy(send.iov, v.recv().iov, send.length);
        }
        from.requests().pollFirst();
        peer.completeRecv(v.recv(), v.recvStatus(), v.accepted() ? send.length : 0, v.op(), v.invalidated());
        from.completeRequest(send, v.senderStatus(), v.accepted() ? send.length : 0);
        if (!v.accepted()) {
            from.connection().breakLink();
        }
        return true;
    }

    private boolean rdma(EmuEp from, WorkRequest.Rdma rdma, EmuEp peer) {
        List<MemorySegment> local;
        if (rdma.iov != null) {
            if (!Segments.usable(rdma.iov)) {
                return from.fail(rdma, DtoStatus.LOCAL_PROTECTION);
            }
            local = Segments.slices(rdma.iov);
        } else {
            MemorySegment sink = ia(from).contexts().resolve(rdma.localTarget.rmrContext(), from,
                    rdma.localTarget.targetAddress(), rdma.length, MemPriv.REMOTE_WRITE);
            if (sink == null) {
                return from.fail(rdma, DtoStatus.LOCAL_PROTECTION);
            }
            local = List.of(sink);
        }
        MemorySegment target = RcRules.remoteMemory(peer, rdma.remote.rmrContext() & 0xffff_ffffL,
                rdma.remote.targetAddress(), rdma.remote.length(), rdma.read);
        if (target == null) {
            return from.fail(rdma, DtoStatus.REMOTE_ACCESS);
        }
        if (rdma.read) {
            Segments.copy(List.of(target), local, rdma.length);
        } else {
            Segments.copy(local, List.of(target), rdma.length);
        }
        from.requests().pollFirst();
        from.completeRequest(rdma, DtoStatus.SUCCESS, rdma.length);
        return true;
    }
}
