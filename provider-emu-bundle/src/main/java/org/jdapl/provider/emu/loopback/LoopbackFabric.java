package org.jdapl.provider.emu.loopback;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntPredicate;
import org.jdapl.provider.emu.ConnectAttempt;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.Fabric;
import org.jdapl.provider.emu.LockDomain;
import org.jdapl.provider.emu.RemoteAddresses;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventNumber;

/**
 * The in-JVM fabric: every IA opened on it holds a distinct address in 127.77.0.0/16 (port 0), and
 * IAs reach each other by address. Addresses are handed out round-robin so that an address freed by
 * a closed IA is not reused at once. Each IA starts with a {@link LockDomain} of its own; a connect
 * merges the domains of the two IAs before the request is delivered, so a transfer and a disconnect
 * of one connection never interleave, while connections between disjoint IAs share no lock. The
 * fabric's own lock guards only its address table.
 */
public final class LoopbackFabric implements Fabric {
    /** The one loopback fabric of the JVM (of this bundle's class loader). */
    public static final LoopbackFabric INSTANCE = new LoopbackFabric();

    private static final int FIRST = 1;
    private static final int LAST = 0xfffe;

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<Integer, EmuIa> byIndex = new HashMap<>();
    private final Map<EmuIa, Integer> indexOf = new HashMap<>();
    private int next = FIRST;

    private LoopbackFabric() {
    }

    @Override
    public String name() {
        return "loopback";
    }

    @Override
    public LockDomain lockDomain() {
        return new LockDomain();
    }

    @Override
    public boolean canConnect(EmuIa ia, SocketAddress remote) {
        EmuIa target = resolve(remote);
        return target == null || target.domain().sameAs(ia.domain());
    }

    /**
     * Delivers the request to the IA at {@code remote} (in the attempt's lock domain since
     * {@link #prepareConnect}); with nobody there the attempt ends UNREACHABLE (CONN_06), with nobody
     * listening on {@code qual} NON_PEER_REJECTED (CONN_05), both after the call returns.
     */
    @Override
    public void connect(ConnectAttempt attempt, SocketAddress remote, long qual, boolean common, byte[] data,
                        long portQual) {
        EmuIa from = attempt.ep.ia();
        EmuIa target = resolve(remote);
        if (target == null) {
            from.later(() -> attempt.ep.connection().failAttempt(attempt, EventNumber.CONNECTION_UNREACHABLE));
        } else if (!target.deliverRequest(new LoopbackRequest(attempt, from, target), qual, common, data, from.address(), portQual)) {
            from.later(() -> attempt.ep.connection().failAttempt(attempt, EventNumber.CONNECTION_NON_PEER_REJECTED));
        }
    }

    /** A CSP of a loopback IA listens on the IA's own address; port 0 picks the first free one from 1024. */
    @Override
    public InetSocketAddress listenCommon(EmuIa ia, SocketAddress at, IntPredicate taken) {
        InetAddress own = ((InetSocketAddress) ia.address()).getAddress();
        if (!(at instanceof InetSocketAddress inet) || inet.isUnresolved() || !inet.getAddress().equals(own)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_UNSUPPORTED,
                    "a CSP listens on this IA's address " + ia.address() + ", not " + at);
        }
        int port = inet.getPort();
        if (port == 0) {
            port = 1024;
            while (port <= 0xffff && taken.test(port)) {
                port++;
            }
            if (port > 0xffff) {
                throw new DatException(DatReturnType.PORT_IN_USE, "every CSP port of IA " + ia.name() + " is in use");
            }
        } else if (taken.test(port)) {
            throw new DatException(DatReturnType.PORT_IN_USE, "CSP port " + port + " is in use on IA " + ia.name());
        }
        return new InetSocketAddress(own, port);
    }

    @Override
    public void prepareConnect(EmuIa ia, SocketAddress remote) {
        EmuIa target = resolve(remote);
        if (target != null) {
            LockDomain.merge(ia.domain(), target.domain());
        }
    }

    @Override
    public SocketAddress attach(EmuIa ia) {
        lock.lock();
        try {
            for (int tries = 0; tries <= LAST - FIRST; tries++) {
                int index = next;
                next = next == LAST ? FIRST : next + 1;
                if (!byIndex.containsKey(index)) {
                    byIndex.put(index, ia);
                    indexOf.put(ia, index);
                    return address(index);
                }
            }
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_DEVICE,
                    "every address of the loopback fabric 127.77.0.0/16 is in use");
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void detach(EmuIa ia) {
        lock.lock();
        try {
            Integer index = indexOf.remove(ia);
            if (index != null) {
                byIndex.remove(index);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public EmuIa resolve(SocketAddress address) {
        int index = indexOf(address);
        if (index < 0) {
            return null;
        }
        lock.lock();
        try {
            return byIndex.get(index);
        } finally {
            lock.unlock();
        }
    }

    /** Behaviours: CONN_08. */
    @Override
    public void checkRemoteAddress(SocketAddress address) {
        InetSocketAddress inet = RemoteAddresses.ip(address, "the emulated provider reaches IAs by IP address");
        InetAddress ip = inet.getAddress();
        byte[] b = ip.getAddress();
        boolean fabricEdge = isFabricRange(ip) && (fabricIndex(b) == 0 || fabricIndex(b) == 0xffff);
        if (RemoteAddresses.namesNoIa(ip) || fabricEdge) {
            throw RemoteAddresses.noIa(inet);
        }
    }

    @Override
    public SocketAddress unassignedAddress() {
        lock.lock();
        try {
            for (int index = LAST; index >= FIRST; index--) {
                if (!byIndex.containsKey(index)) {
                    return address(index);
                }
            }
            throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, "every loopback address is in use");
        } finally {
            lock.unlock();
        }
    }

    private static InetSocketAddress address(int index) {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(
                    new byte[] {127, 77, (byte) (index >>> 8), (byte) index}), 0);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean isFabricRange(InetAddress ip) {
        byte[] b = ip.getAddress();
        return ip instanceof Inet4Address && b[0] == 127 && b[1] == 77;
    }

    private static int fabricIndex(byte[] b) {
        return ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    private static int indexOf(SocketAddress address) {
        if (address instanceof InetSocketAddress inet && !inet.isUnresolved() && inet.getAddress() != null
                && isFabricRange(inet.getAddress())) {
            return fabricIndex(inet.getAddress().getAddress());
        }
        return -1;
    }
}
