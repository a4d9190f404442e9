package org.jdapl.provider.emu;

import java.util.concurrent.ScheduledFuture;
import org.jdapl.provider.emu.loopback.LoopbackLink;

/**
 * One {@code dat_ep_connect} of an active EP, from the call until it is established, rejected,
 * timed out or abandoned. A connection request delivered to a peer names its attempt, so a late
 * accept can tell that the active side no longer waits. On the loopback fabric the attempt is the
 * request's {@link Inbound}: the passive IA answers the active EP directly (both IAs share a lock
 * domain).
 */
public final class ConnectAttempt implements Inbound {
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

    @Override
    public void delivered() {
        delivered = true;
    }

    /** Establishes a {@link LoopbackLink} between the active EP and {@code passive} (CONN_03, CONN_13). */
    @Override
    public boolean accept(EmuEp passive, byte[] privateData) {
        if (!isLive() || ep.state() != org.jdapl.dat.EpState.ACTIVE_CONNECTION_PENDING) {
            return false;
        }
        Link link = new LoopbackLink(ep, passive);
        passive.connection().established(link, null);
        ep.connection().established(link, privateData);
        return true;
    }

    @Override
    public void reject(byte[] privateData) {
        ep.connection().rejectedBy(this, privateData);
    }

    @Override
    public void refuse(String reason) {
        ep.connection().failAttempt(this, org.jdapl.dat.EventNumber.CONNECTION_NON_PEER_REJECTED);
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
