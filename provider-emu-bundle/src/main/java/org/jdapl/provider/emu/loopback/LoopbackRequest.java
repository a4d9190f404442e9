package org.jdapl.provider.emu.loopback;

import org.jdapl.provider.emu.ConnectAttempt;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.Inbound;

/**
 * A connection request on the loopback fabric as the passive IA answers it: each answer goes to the
 * active EP's {@link ConnectAttempt} at once (both IAs share a lock domain); an accept makes the
 * {@link LoopbackLink} between the two EPs, each with its IA.
 */
final class LoopbackRequest implements Inbound {
    private final ConnectAttempt attempt;
    private final EmuIa activeIa;
    private final EmuIa passiveIa;

    /** {@code attempt} of an EP of {@code activeIa}, delivered to {@code passiveIa}. */
    LoopbackRequest(ConnectAttempt attempt, EmuIa activeIa, EmuIa passiveIa) {
        this.attempt = attempt;
        this.activeIa = activeIa;
        this.passiveIa = passiveIa;
    }

    @Override
    public void delivered() {
        attempt.delivered();
    }

    /** Establishes a {@link LoopbackLink} between the active EP and {@code passive} (CONN_03, CONN_13). */
    @Override
    public boolean accept(EmuEp passive, byte[] privateData) {
        if (!attempt.awaitsAnswer()) {
            return false;
        }
        attempt.establish(passive, new LoopbackLink(attempt.ep, activeIa, passive, passiveIa), privateData);
        return true;
    }

    @Override
    public void reject(byte[] privateData) {
        attempt.reject(privateData);
    }

    @Override
    public void refuse(String reason) {
        attempt.refuse(reason);
    }
}
