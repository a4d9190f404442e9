package org.jdapl.provider.emu;

import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;

/**
 * A UD exchange request at the passive IA (DAT_IB_UD_CONNECTION_REQUEST_EVENT): accepting it with a
 * datagram endpoint hands each side the other's address handle (IB_UD_CONNECTION_ESTABLISHED on both
 * connect EVDs); rejecting it gives the active side IB_UD_CONNECTION_REJECT. Consumed once, under the
 * domain lock the exchange merged both IAs into (loopback), or under the passive IA's lock with the
 * active side an {@link EmuUdEp.Exchange} on its own tcp connection (tcp).
 *
 * <p>Behaviours: EXT_08, EXT_10.
 */
final class UdRequest extends EmuObject implements ConnectionRequest {
    private final EmuIa ia;
    /** The active endpoint on the loopback fabric (null for a remote one). */
    private final EmuUdEp active;
    /** The active side on another IA of the tcp fabric (null for a local one). */
    private final EmuUdEp.Exchange remote;
    private final byte[] privateData;

    UdRequest(EmuIa ia, EmuUdEp active, byte[] privateData) {
        super(HandleType.CR);
        this.ia = ia;
        this.active = active;
        this.remote = null;
        this.privateData = privateData;
    }

    UdRequest(EmuIa ia, EmuUdEp.Exchange remote, byte[] privateData) {
        super(HandleType.CR);
        this.ia = ia;
        this.active = null;
        this.remote = remote;
        this.privateData = privateData;
    }

    /** The active endpoint's handle. */
    EmuAh activeHandle() {
        return active != null ? active.handle() : remote.handle();
    }

    private boolean activeGone() {
        return active != null ? active.isFreed() || !active.exchanging() : remote.gone();
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    @Override
    public CrParam query() {
        return ia.locked(() -> {
            checkLive();
            return new CrParam(activeHandle().address(), activeHandle().qpn(), privateData.clone(), null);
        });
    }

    @Override
    public void accept(Endpoint ep, byte[] acceptData) {
        ia.locked(() -> {
            checkLive();
            byte[] data = EmuLimits.privateData(acceptData, 2);
            if (!(ep instanceof EmuUdEp passive)) {
                throw DatException.invalidParameter(1, "a UD request is accepted with a datagram endpoint");
            }
            ia.own(passive, EmuUdEp.class, HandleType.EP);
            passive.requireExchanging("accept");
            consume();
            ia.counts().inc(IaCounter.SP_CR_ACCEPTED);
            if (activeGone()) {
                passive.evds().udConnection(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR, null,
                        null);
                return;
            }
            passive.exchanged();
            if (active != null) {
                active.exchanged();
                active.evds().udConnection(EventNumber.IB_UD_CONNECTION_ESTABLISHED, ExtensionType.UD_REMOTE_AH,
                        passive.handle(), data);
            } else {
                remote.accepted(passive, data);
            }
            passive.evds().udConnection(EventNumber.IB_UD_CONNECTION_ESTABLISHED, ExtensionType.UD_PASSIVE_REMOTE_AH,
                    activeHandle(), privateData);
        });
    }

    @Override
    public void reject(byte[] rejectData) {
        ia.locked(() -> {
            checkLive();
            byte[] data = EmuLimits.privateData(rejectData, 1);
            consume();
            ia.counts().inc(IaCounter.SP_CR_REJECTED);
            if (remote != null) {
                remote.rejected(data);
            } else if (!active.isFreed()) {
                active.evds().udConnection(EventNumber.IB_UD_CONNECTION_REJECT, ExtensionType.UD_CONNECT_REJECT, null,
                        data);
            }
        });
    }

    @Override
    public void handoff(long connQual) {
        checkLive();
        throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_cr_handoff of a UD request");
    }

    private void consume() {
        markFreed();
        ia.forget(this);
    }
}
