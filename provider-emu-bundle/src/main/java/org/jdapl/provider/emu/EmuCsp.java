package org.jdapl.provider.emu;

import java.net.InetSocketAddress;

import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.HandleType;

/**
 * An emulated Common Service Point: listens on the IA's address with a port of its own; peers reach
 * it with {@code dat_ep_common_connect} and the request carries the port as connection qualifier.
 */
final class EmuCsp extends EmuObject implements CommonServicePoint {
    private final EmuIa ia;
    private final InetSocketAddress address;
    private final EmuEvd evd;

    EmuCsp(EmuIa ia, InetSocketAddress address, EmuEvd evd) {
        super(HandleType.CSP);
        this.ia = ia;
        this.address = address;
        this.evd = evd;
        evd.use();
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuEvd evd() {
        return evd;
    }

    int port() {
        return address.getPort();
    }

    @Override
    public CspParam query() {
        checkLive();
        return new CspParam(ia, address, evd);
    }

    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            destroy();
            ia.forget(this);
        });
    }

    void destroy() {
        markFreed();
        ia.listeners().stopCommon(address.getPort(), this);
        evd.unuse();
    }
}
