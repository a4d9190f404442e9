package org.jdapl.provider.emu;

import org.jdapl.dat.EpState;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.ReservedServicePoint;

/**
 * An emulated Reserved Service Point: one connection request for one reserved EP. The request's
 * arrival destroys it and moves the EP to PASSIVE_CONNECTION_PENDING; freeing it first returns the
 * EP to UNCONNECTED.
 */
final class EmuRsp extends EmuListener implements ReservedServicePoint {
    private final EmuEp ep;

    EmuRsp(EmuIa ia, long connQual, EmuEvd evd, EmuEp ep) {
        super(HandleType.RSP, ia, evd, connQual);
        this.ep = ep;
    }

    EmuEp ep() {
        return ep;
    }

    @Override
    public RspParam query() {
        checkLive();
        return new RspParam(ia(), qual, evd(), ep);
    }

    @Override
    public void free() {
        freeWith(() -> {
            destroy();
            if (!ep.isFreed() && ep.state() == EpState.RESERVED) {
                ep.connection().unreserve();
            }
        });
    }
}
