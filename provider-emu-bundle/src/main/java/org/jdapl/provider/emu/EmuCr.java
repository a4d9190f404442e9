package org.jdapl.provider.emu;

import java.net.SocketAddress;

import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatException;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.HandleType;

/**
 * An emulated connection request at the passive IA. Accept, reject or handoff consume it once. It
 * names the active side ({@link Inbound}): if that side no longer waits (timed out, freed,
 * disconnected), an accept yields ACCEPT_COMPLETION_ERROR and never a half-open connection (CONN_03).
 */
final class EmuCr extends EmuObject implements ConnectionRequest {
    private final EmuIa ia;
    private final Inbound inbound;
    private final long connQual;
    private final SocketAddress remoteAddress;
    private final long remotePortQual;
    private final byte[] privateData;
    private final EmuEp localEp;
    private final EmuPsp psp;

    EmuCr(EmuIa ia, Inbound inbound, long connQual, SocketAddress remoteAddress, long remotePortQual,
          byte[] privateData, EmuEp localEp, EmuPsp psp) {
        super(HandleType.CR);
        this.ia = ia;
        this.inbound = inbound;
        this.connQual = connQual;
        this.remoteAddress = remoteAddress;
        this.remotePortQual = remotePortQual;
        this.privateData = privateData;
        this.localEp = localEp;
        this.psp = psp;
        if (psp != null) {
            psp.requestArrived();
        }
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    /** The active side the answer goes to. */
    Inbound inbound() {
        return inbound;
    }

    long connQual() {
        return connQual;
    }

    SocketAddress remoteAddress() {
        return remoteAddress;
    }

    long remotePortQual() {
        return remotePortQual;
    }

    /** Behaviours: CONN_10, CONN_11, OBJ_10: private data and the active side's address and port. */
    @Override
    public CrParam query() {
        return ia.locked(() -> {
            checkLive();
            return new CrParam(remoteAddress, remotePortQual, privateData.clone(), localEp);
        });
    }

    @Override
    public void accept(Endpoint ep, byte[] acceptData) {
        ia.locked(() -> {
            checkLive();
            byte[] data = EmuLimits.privateData(acceptData, 2);
            EmuEp target;
            if (ep == null) {
                if (localEp == null) {
                    throw DatException.invalidParameter(1, "this request came to a consumer PSP: accept needs an EP");
                }
                target = localEp;
            } else {
                target = ia.own(ep, EmuEp.class, HandleType.EP);
                if (localEp != null && target != localEp) {
                    throw DatException.invalidParameter(1, "this request belongs to its reserved or provider EP");
                }
            }
            EpState expected = localEp == null ? EpState.UNCONNECTED : target.state();
            if (target.state() != expected || (localEp != null && expected != EpState.PASSIVE_CONNECTION_PENDING
                    && expected != EpState.TENTATIVE_CONNECTION_PENDING)) {
                throw target.state().invalid("accept");
            }
            if (target instanceof EmuUdEp) {
                throw DatException.invalidParameter(1, "a datagram endpoint accepts only UD exchange requests");
            }
            target.connection().checkCanAccept();
            consume();
            ia.counts().inc(org.jdapl.dat.IaCounter.SP_CR_ACCEPTED);
            target.connection().acceptFrom(this, data);
        });
    }

    @Override
    public void reject(byte[] rejectData) {
        ia.locked(() -> {
            checkLive();
            byte[] data = EmuLimits.privateData(rejectData, 1);
            consume();
            ia.counts().inc(org.jdapl.dat.IaCounter.SP_CR_REJECTED);
            releaseLocalEp();
            inbound.reject(data);
        });
    }

    @Override
    public void handoff(long newConnQual) {
        ia.locked(() -> {
            checkLive();
            if (!ia.listeners().isListening(newConnQual)) {
                throw DatException.invalidParameter(2, "nothing listens on connection qualifier " + newConnQual);
            }
            consume();
            releaseLocalEp();
            if (!ia.deliverRequest(inbound, newConnQual, false, privateData, remoteAddress, remotePortQual)) {
                refuse("nothing listens on connection qualifier " + newConnQual + " after a handoff");
            }
        });
    }

    private void consume() {
        markFreed();
        ia.forget(this);
        if (psp != null) {
            psp.requestAnswered();
        }
    }

    private void releaseLocalEp() {
        if (localEp != null && !localEp.isFreed()) {
            localEp.connection().releaseRequest(this);
        }
    }

    /** The passive IA closes with the request unanswered: the active side is refused (fabric lock held). */
    void destroy() {
        markFreed();
        if (psp != null) {
            psp.requestAnswered();
        }
        refuse("the IA closed with the request unanswered");
    }

    private void refuse(String reason) {
        inbound.refuse(reason);
    }
}
