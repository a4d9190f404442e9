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
 * domain lock the exchange merged both IAs into.
 *
 * <p>Behaviours: EXT_10.
 */
final class UdRequest extends EmuObject implements ConnectionRequest {
    private final EmuIa ia;
    private final EmuUdEp active;
    private final byte[] privateData;

    UdRequest(EmuIa ia, EmuUdEp active, byte[] privateData) {
        super(HandleType.CR);
        this.ia = ia;
        this.active = active;
        this.privateData = privateData;
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    @Override
    public CrParam query() {
        return ia.locked(() -> {
            checkLive();
            return new CrParam(active.ia().address(), active.qpn(), privateData.clone(), null);
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
            if (active.isFreed() || !active.exchanging()) {
                passive.evds().udConnection(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR, null,
                        null);
                return;
            }
            passive.exchanged();
            active.exchanged();
            active.evds().udConnection(EventNumber.IB_UD_CONNECTION_ESTABLISHED, ExtensionType.UD_REMOTE_AH,
                    passive.handle(), data);
            passive.evds().udConnection(EventNumber.IB_UD_CONNECTION_ESTABLISHED, ExtensionType.UD_PASSIVE_REMOTE_AH,
                    active.handle(), privateData);
        });
    }

    @Override
    public void reject(byte[] rejectData) {
        ia.locked(() -> {
            checkLive();
            byte[] data = EmuLimits.privateData(rejectData, 1);
            consume();
            ia.counts().inc(IaCounter.SP_CR_REJECTED);
            if (!active.isFreed()) {
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
