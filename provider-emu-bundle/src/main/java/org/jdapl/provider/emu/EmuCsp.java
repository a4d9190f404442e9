package org.jdapl.provider.emu;

import java.net.InetSocketAddress;

import org.jdapl.dat.CommonServicePoint;
import org.jdapl.dat.HandleType;

/**
 * An emulated Common Service Point: listens on the IA's address with a port of its own; peers reach
 * it with {@code dat_ep_common_connect} and the request carries the port as connection qualifier.
 */
final class EmuCsp extends EmuListener implements CommonServicePoint {
    private final InetSocketAddress address;

    EmuCsp(EmuIa ia, InetSocketAddress address, EmuEvd evd) {
        super(HandleType.CSP, ia, evd, address.getPort());
        this.address = address;
    }

    int port() {
        return address.getPort();
    }

    @Override
    public CspParam query() {
        checkLive();
        return new CspParam(ia(), address, evd());
    }

    @Override
    public void free() {
        freeWith(this::destroy);
    }

    @Override
    void stopListening() {
        ia().listeners().stopCommon(address.getPort(), this);
    }
}
