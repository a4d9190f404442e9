package org.jdapl.provider.emu;

import java.util.concurrent.ScheduledFuture;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;

/**
 * One {@code dat_ep_connect} of an active EP, from the call until it is established, rejected,
 * timed out or abandoned. A connection request delivered to a peer names its attempt, so a late
 * accept can tell that the active side no longer waits. On the loopback fabric the request's
 * {@link Inbound} hands the passive IA's answer to the attempt directly (both IAs share a lock
 * domain): {@link #establish}, {@link #reject}, {@link #refuse}.
 */
public final class ConnectAttempt {
    public final EmuEp ep;
    final byte[] privateData;
    private boolean done;
    private ScheduledFuture<?> timer;
    /** Whether a connection request reached a listener (TIMED_OUT rather than UNREACHABLE). */
    public boolean delivered;

    ConnectAttempt(EmuEp ep, byte[] privateData) {
        this.ep = ep;
        this.privateData = privateData;
    }

    /** Whether the active EP still waits for this attempt's outcome. */
    public boolean isLive() {
        return !done && ep.connection().attempt() == this && !ep.isFreed();
    }

    void setTimer(ScheduledFuture<?> t) {
        timer = t;
    }

    /** The request reached a listener: the attempt can now time out rather than be unreachable. */
    public void delivered() {
        delivered = true;
    }

    /** Whether the active EP still waits for the answer to this attempt (ACTIVE_CONNECTION_PENDING). */
    public boolean awaitsAnswer() {
        return isLive() && ep.state() == EpState.ACTIVE_CONNECTION_PENDING;
    }

    /**
     * {@code passive} accepted on {@code link}: the connection is established at both ends at once
     * (CONN_03, CONN_13). Only while {@link #awaitsAnswer}.
     */
    public void establish(EmuEp passive, Link link, byte[] privateData) {
        passive.connection().established(link, null);
        ep.connection().established(link, privateData);
    }

    /** {@code dat_cr_reject}: PEER_REJECTED with the data at the active EP (CONN_04, CONN_13). */
    public void reject(byte[] privateData) {
        ep.connection().rejectedBy(this, privateData);
    }

    /** The provider refused the request: NON_PEER_REJECTED at the active EP (CONN_05). */
    public void refuse(String reason) {
        ep.connection().failAttempt(this, EventNumber.CONNECTION_NON_PEER_REJECTED);
    }

    /** Ends the attempt: nothing more happens for it. */
    void finish() {
        done = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
