package org.jdapl.provider.emu;

import java.util.List;

import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.RmrTriplet;

/**
 * An established connection of an EP, as the EP sees it: data moves only while it is open; the first
 * side that reaches DISCONNECTED closes it, so no byte moves on a half-closed connection. The loopback
 * fabric joins two EPs of one JVM ({@link org.jdapl.provider.emu.loopback.LoopbackLink}); the TCP fabric joins an EP to a peer in another
 * process ({@link org.jdapl.provider.emu.tcp.TcpConnection}). Every method runs under the domain lock of
 * the EP's IA, but for the common send and receive path a link may take without it ({@link #trySend},
 * {@link #postsReceivesWithoutLock}).
 */
public abstract class Link {
    /** Whether data can still move (set by the fabric's link once established, cleared on close). */
    protected volatile boolean open;

    /** Whether data can still move. */
    public final boolean isOpen() {
        return open;
    }

    /** Stops data movement for good (the local EP is DISCONNECTED). */
    public abstract void close();

    /**
     * Ends the connection at once: the peer reports DISCONNECTED ({@code broken} false) or BROKEN, and
     * its outstanding DTOs are flushed.
     */
    public abstract void abort(EmuEp from, boolean broken);

    /** The graceful disconnect notification of the NetworkDirect scheme (or the answer to the peer's). */
    public abstract void notifyDisconnect(EmuEp from);

    /** A receive became available at {@code from}: a send of the peer waiting for one may proceed. */
    public abstract void receivePosted(EmuEp from);

    /**
     * Moves a send of the checked segments {@code iov} ({@code length} bytes, no invalidate) from
     * {@code from} to the peer at once and completes it, without the domain lock, if that can succeed
     * now: nothing is queued before it and the peer has a receive that takes it. No work request is made
     * for it. Called without the domain lock.
     *
     * @param flagBits the completion flags as {@link WorkRequest#bitsOf} gives them
     * @return false, with nothing changed, when the send must go through the request queue under the
     *         domain lock (the default)
     */
    public boolean trySend(EmuEp from, List<LmrTriplet> iov, long length, long cookie, int flagBits) {
        return false;
    }

    /**
     * Executes an RDMA Write ({@code read} false) or Read of the checked segments {@code iov}
     * ({@code length} bytes) against {@code remote} at once and completes it, if that can succeed now:
     * nothing is queued before it. No work request is made for it. Called under the domain lock.
     *
     * @param flagBits the completion flags as {@link WorkRequest#bitsOf} gives them
     * @return false, with nothing changed, when the RDMA must go through the request queue (the default)
     */
    public boolean tryRdma(EmuEp from, boolean read, List<LmrTriplet> iov, long length, long cookie,
                           RmrTriplet remote, int flagBits) {
        return false;
    }

    /** Whether receives of a CONNECTED EP are queued without the domain lock (the default: no). */
    public boolean postsReceivesWithoutLock() {
        return false;
    }

    /**
     * Whether a receive queued at {@code from} without the domain lock must be reported through
     * {@link #receivePosted} under it (a send of the peer waits for one).
     */
    public boolean awaitsReceive(EmuEp from) {
        return true;
    }

    /** Processes the request queue of {@code from} as far as it can go now. */
    public abstract void pump(EmuEp from);

    /**
     * The EP no longer wants this connection while it is being established (timed out, disconnected,
     * freed). A loopback link is established at once and has nothing to abandon.
     */
    public void abandon() {
    }
}
