package org.jdapl.provider.ofi;

import java.net.InetSocketAddress;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.provider.ofi.fabric.Fi;

/**
 * What the connection state machines of an EP share, over libfabric's connection management
 * ({@link EpConnection}, MSG endpoints) and over jdapl's protocol on RDM endpoints
 * ({@link RdmConnection}): the EP's state, the post and bind checks, the graceful and abrupt
 * disconnect (a graceful one waits in DISCONNECT_PENDING until the last outstanding request
 * completes; then, and at once for an abrupt one, the connection ends), the end of a connection
 * (the completions the CQs hold are read first, then the transport's {@link #end} flushes what is
 * left and queues the one terminal event) and the connect time-out.
 *
 * <p>Behaviours: DISC_01, DISC_04, DISC_05, DISC_06, DISC_07, DISC_08, CONN_07.
 */
abstract class Connection {
    final OfiEp ep;
    EpState state = EpState.UNCONNECTED;
    /** The peer's address and port (its connection qualifier on the active side), null and 0 before. */
    InetSocketAddress remote;
    long remotePort;

    Connection(OfiEp ep) {
        this.ep = ep;
    }

    final EpState state() {
        return state;
    }

    final void setState(EpState s) {
        state = s;
    }

    /** The transport endpoint of the data path, 0 while there is none. */
    abstract long fid();

    abstract long localPort();

    final InetSocketAddress remoteAddress() {
        return remote;
    }

    final long remotePort() {
        return remotePort;
    }

    abstract void connect(InetSocketAddress target, long timeoutMicros, byte[] privateData);

    /**
     * A request completed {@code FI_ECANCELED} (the EP's lock is held): true if the connection keeps it
     * outstanding while it finds out why ({@link RdmConnection#cancelled}); by default false, a flush.
     */
    boolean cancelled(long context) {
        return false;
    }

    /** A completion of the EP was read before the connection was reported established (the EP's lock is held). */
    abstract void completionBeforeConnected();

    /**
     * Ends the connection with {@code number} once the CQs were read: the transport is shut, what is
     * still outstanding completes FLUSHED and the event is queued. Called with no lock held.
     */
    abstract void end(EventNumber number, byte[] privateData);

    /** The EP is freed (its lock held): the connection goes without an event. */
    abstract void release();

    abstract void reset();

    static DatReturnSubtype subtype(EpState s) {
        return switch (s) {
            case UNCONNECTED -> DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED;
            case RESERVED -> DatReturnSubtype.INVALID_STATE_EP_RESERVED;
            case PASSIVE_CONNECTION_PENDING -> DatReturnSubtype.INVALID_STATE_EP_PASSCONNPENDING;
            case TENTATIVE_CONNECTION_PENDING -> DatReturnSubtype.INVALID_STATE_EP_TENTCONNPENDING;
            case ACTIVE_CONNECTION_PENDING -> DatReturnSubtype.INVALID_STATE_EP_ACTCONNPENDING;
            case COMPLETION_PENDING -> DatReturnSubtype.INVALID_STATE_EP_COMPLPENDING;
            case CONNECTED -> DatReturnSubtype.INVALID_STATE_EP_CONNECTED;
            case DISCONNECT_PENDING -> DatReturnSubtype.INVALID_STATE_EP_DISCPENDING;
            case DISCONNECTED -> DatReturnSubtype.INVALID_STATE_EP_DISCONNECTED;
            default -> DatReturnSubtype.INVALID_STATE_EP_NOTREADY;
        };
    }

    /** A post needs CONNECTED (DISC_07). */
    void checkCanPost() {
        if (state != EpState.CONNECTED) {
            throw DatException.invalidState(subtype(state), "posting in " + state);
        }
    }

    void checkCanBind() {
        if (state == EpState.DISCONNECT_PENDING) {
            throw DatException.invalidState(subtype(state), "binding in " + state);
        }
    }

    /**
     * After a completion (the EP's lock held): an error other than a flush breaks the connection; the
     * last request of a graceful disconnect lets it go on. Both run on the progress thread.
     */
    void afterCompletion(int err) {
        if (err != 0 && err != Fi.FI_ECANCELED && state == EpState.CONNECTED) {
            ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_BROKEN, null));
        } else if (state == EpState.DISCONNECT_PENDING && ep.data.requestIdle()) {
            ep.ia.progress.later(() -> terminate(EventNumber.CONNECTION_DISCONNECTED, null));
        } else if (state == EpState.DISCONNECT_PENDING) {
            ep.data.drainSilentTail(fid());
        }
    }

    void disconnect(CloseFlag flag) {
        synchronized (ep) {
            switch (state) {
                case UNCONNECTED, RESERVED, PASSIVE_CONNECTION_PENDING, TENTATIVE_CONNECTION_PENDING ->
                        throw DatException.invalidState(subtype(state), "dat_ep_disconnect in " + state);
                case DISCONNECTED -> {
                    return;
                }
                case DISCONNECT_PENDING -> {
                    if (flag == CloseFlag.GRACEFUL) {
                        return;
                    }
                }
                case CONNECTED -> {
                    if (flag == CloseFlag.GRACEFUL && !ep.data.requestIdle()) {
                        state = EpState.DISCONNECT_PENDING;
                        ep.data.drainSilentTail(fid());
                        return;
                    }
                }
                default -> {
                }
            }
        }
        terminate(EventNumber.CONNECTION_DISCONNECTED, null);
    }

    /**
     * Ends the connection with {@code number}: reads what the EP's CQs hold, then {@link #end}.
     * Called with no lock held (or only the EQ's).
     */
    final void terminate(EventNumber number, byte[] privateData) {
        OfiEvd r = ep.recvEvd();
        OfiEvd q = ep.requestEvd();
        if (r != null) {
            r.drainCq();
        }
        if (q != null && q != r) {
            q.drainCq();
        }
        end(number, privateData);
    }

    /** The connect time-out: an active connection still pending ends TIMED_OUT. */
    void timedOut() {
        synchronized (ep) {
            if (state != EpState.ACTIVE_CONNECTION_PENDING) {
                return;
            }
        }
        terminate(EventNumber.CONNECTION_TIMED_OUT, null);
    }

    /** Queues {@code number} on the EP's connect EVD, if it has one (the EP's lock is held). */
    final void queueEvent(EventNumber number, byte[] privateData) {
        OfiEvd c = ep.connectEvd();
        if (c != null) {
            c.enqueue(new DatEvent.Connection(c, number, ep, privateData));
        }
    }

    /** Runs {@code task} with the CQs' locks held (taken before the EP's, as a CQ reader does). */
    static void underCqLocks(OfiEvd r, OfiEvd q, Runnable task) {
        Runnable inQ = q != null && q != r ? () -> q.withCqLocked(task) : task;
        if (r != null) {
            r.withCqLocked(inQ);
        } else {
            inQ.run();
        }
    }
}
