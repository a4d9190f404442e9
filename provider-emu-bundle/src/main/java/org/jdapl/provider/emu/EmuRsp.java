package org.jdapl.provider.emu;

import org.jdapl.dat.EpState;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ReservedServicePoint;

/**
 * An emulated Reserved Service Point: one connection request for one reserved EP. The request's
 * arrival destroys it and moves the EP to PASSIVE_CONNECTION_PENDING; freeing it first returns the
 * EP to UNCONNECTED.
 */
final class EmuRsp extends EmuObject implements ReservedServicePoint {
    private final EmuIa ia;
    private final long connQual;
    private final EmuEvd evd;
    private final EmuEp ep;

    EmuRsp(EmuIa ia, long connQual, EmuEvd evd, EmuEp ep) {
        super(HandleType.RSP);
        this.ia = ia;
        this.connQual = connQual;
        this.evd = evd;
        this.ep = ep;
        evd.use();
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuEvd evd() {
        return evd;
    }

    EmuEp ep() {
        return ep;
    }

    @Override
    public RspParam query() {
        checkLive();
        return new RspParam(ia, connQual, evd, ep);
    }

    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            destroy();
            if (!ep.isFreed() && ep.state() == EpState.RESERVED) {
                ep.unreserve();
            }
            ia.forget(this);
        });
    }

    /** Destroys the RSP without touching the EP (fabric lock held). */
    void destroy() {
        markFreed();
        ia.listeners().stop(connQual, this);
        evd.unuse();
    }
}
