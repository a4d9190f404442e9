package org.jdapl.conformance.emu.tcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.ServerSocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.emu.faults.EmuFaults;
import org.jdapl.provider.emu.EmuProvider;

/**
 * The emulated provider's tcp fabric under the kit, with the two IAs of each pair in two processes:
 * the first IA lives in this JVM, the second in a peer JVM ({@link PeerProcess}) and is used here
 * through proxies. Memory the kit gives either IA is a shared file mapping, so the kit reads and
 * writes the peer's registered memory directly. A transport is broken for real (a TCP reset of the
 * connection's socket); an unreachable address is a loopback listener that never answers.
 */
public final class EmuTcpFixture implements ConformanceFixture {
    private final EmuProvider provider = new EmuProvider();
    private final SharedMemory memory = SharedMemory.create();
    private final AtomicInteger opened = new AtomicInteger();
    private final ServerSocketChannel silent;
    private PeerProcess peer;

    /** Starts the peer JVM. */
    public EmuTcpFixture() {
        try {
            silent = ServerSocketChannel.open();
            silent.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        peer = startPeer();
    }

    private PeerProcess startPeer() {
        return PeerProcess.start(memory, List.of(), Map.of("jdapl.emu.rnrRetryMillis",
                Long.toString(Long.getLong("jdapl.emu.rnrRetryMillis", 1000L))));
    }

    @Override
    public String name() {
        return "emu-tcp";
    }

    @Override
    public synchronized IaPair openPair() {
        if (!peer.alive()) {
            peer.close();
            peer = startPeer();
        }
        int n = opened.incrementAndGet();
        InterfaceAdapter local = provider.open(new IaSpec("emu-tcp-a" + n, "tcp 127.0.0.1:0", "", true, "conformance"),
                64);
        try {
            return new IaPair(local, peer.open("emu-tcp-b" + n, "tcp 127.0.0.1:0"));
        } catch (RuntimeException e) {
            local.close();
            throw e;
        }
    }

    @Override
    public MemorySegment allocate(Arena arena, long size) {
        return memory.allocate(arena, size);
    }

    /** A loopback port whose listener never answers: the connect request meets silence. */
    @Override
    public SocketAddress unreachableAddress() {
        try {
            return silent.getLocalAddress();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        try {
            return List.of(UnixDomainSocketAddress.of("x"), InetSocketAddress.createUnresolved("nowhere.invalid", 1),
                    new InetSocketAddress(InetAddress.getByName("239.1.2.3"), 7),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("a literal multicast address did not parse", e);
        }
    }

    @Override
    public void breakTransport(Endpoint ep) {
        if (peer.owns(ep)) {
            peer.breakConnection(ep);
        } else {
            EmuFaults.breakConnection(ep);
        }
    }

    @Override
    public boolean canHoldTransfers() {
        return true;
    }

    @Override
    public void holdTransfers(InterfaceAdapter ia, boolean hold) {
        if (peer.owns(ia)) {
            peer.hold(ia, hold);
        } else {
            EmuFaults.holdTransfers(ia, hold);
        }
    }

    /** The peer process (for fault tests). */
    synchronized PeerProcess peer() {
        return peer;
    }

    @Override
    public synchronized void close() {
        try {
            peer.close();
            silent.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            memory.delete();
        }
    }
}
