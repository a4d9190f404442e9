package org.jdapl.provider.emu;

import java.util.concurrent.ScheduledFuture;

/**
 * One {@code dat_ep_connect} of an active EP, from the call until it is established, rejected,
 * timed out or abandoned. A connection request delivered to a peer names its attempt, so a late
 * accept can tell that the active side no longer waits.
 */
final class ConnectAttempt {
    final EmuEp ep;
    final byte[] privateData;
    private boolean done;
    private ScheduledFuture<?> timer;
    /** Whether a connection request reached a listener (TIMED_OUT rather than UNREACHABLE). */
    boolean delivered;

    ConnectAttempt(EmuEp ep, byte[] privateData) {
        this.ep = ep;
        this.privateData = privateData;
    }

    /** Whether the active EP still waits for this attempt's outcome. */
    boolean isLive() {
        return !done && ep.attempt() == this && !ep.isFreed();
    }

    void setTimer(ScheduledFuture<?> t) {
        timer = t;
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
