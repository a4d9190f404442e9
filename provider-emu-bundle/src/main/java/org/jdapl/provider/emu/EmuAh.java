package org.jdapl.provider.emu;

import java.net.SocketAddress;

import org.jdapl.dat.AddressHandle;

/**
 * An address handle of the loopback fabric: the datagram endpoint it names, with its IA's address
 * and its number. It is only handed out by the provider (UD exchanges, received datagrams).
 */
final class EmuAh implements AddressHandle {
    private final EmuUdEp ep;

    EmuAh(EmuUdEp ep) {
        this.ep = ep;
    }

    EmuUdEp ep() {
        return ep;
    }

    @Override
    public SocketAddress address() {
        return ep.ia().address();
    }

    @Override
    public int qpn() {
        return ep.qpn();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EmuAh a && a.ep == ep;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(ep);
    }

    @Override
    public String toString() {
        return "AddressHandle[" + address() + " qpn " + qpn() + "]";
    }
}
