package org.jdapl.provider.emu;

import java.net.SocketAddress;
import java.util.List;

import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.LmrTriplet;

/**
 * An address handle of the emulated provider: a datagram endpoint, named by its IA's address and its
 * qpn. On the loopback fabric it is the endpoint itself ({@link #ep}); on the tcp fabric it is the
 * remote qpn and the {@link Path} (the tcp connection of a UD exchange) its datagrams travel on. It is
 * only handed out by the provider (UD exchanges, received datagrams).
 *
 * <p>Behaviours: EXT_08.
 */
public final class EmuAh implements AddressHandle {
    /** Where the datagrams to a remote endpoint go: the transport of one UD exchange. */
    public interface Path {
        /**
         * Sends one datagram of {@code length} bytes from {@code iov} (domain lock held); the bytes are
         * copied out before it returns. A path that no longer carries datagrams loses it.
         */
        void send(int sourceQpn, int destinationQpn, List<LmrTriplet> iov, long length);
    }

    private final EmuUdEp ep;
    private final SocketAddress address;
    private final int qpn;
    private final Path path;

    EmuAh(EmuUdEp ep) {
        this.ep = ep;
        this.address = null;
        this.qpn = 0;
        this.path = null;
    }

    private EmuAh(SocketAddress address, int qpn, Path path) {
        this.ep = null;
        this.address = address;
        this.qpn = qpn;
        this.path = path;
    }

    /** The handle of the endpoint {@code qpn} of the IA at {@code address}, reached on {@code path}. */
    public static EmuAh remote(SocketAddress address, int qpn, Path path) {
        return new EmuAh(address, qpn, path);
    }

    /** The local endpoint (loopback fabric), or null for a remote one. */
    EmuUdEp ep() {
        return ep;
    }

    /** The path to a remote endpoint, or null for a local one. */
    Path path() {
        return path;
    }

    @Override
    public SocketAddress address() {
        return ep != null ? ep.ia().address() : address;
    }

    @Override
    public int qpn() {
        return ep != null ? ep.qpn() : qpn;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EmuAh a && (ep != null ? a.ep == ep : a.ep == null && a.path == path && a.qpn == qpn);
    }

    @Override
    public int hashCode() {
        return ep != null ? System.identityHashCode(ep) : System.identityHashCode(path) * 31 + qpn;
    }

    @Override
    public String toString() {
        return "AddressHandle[" + address() + " qpn " + qpn() + "]";
    }
}
