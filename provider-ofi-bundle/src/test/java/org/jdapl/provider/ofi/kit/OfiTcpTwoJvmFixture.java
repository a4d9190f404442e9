package org.jdapl.provider.ofi.kit;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Timing;
import org.jdapl.conformance.emu.tcp.PeerProcess;
import org.jdapl.conformance.emu.tcp.SharedMemory;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofi.OfiProvider;

/**
 * The ofi provider under the kit with the two IAs of each pair in two processes ({@code ofi-tcp-2jvm}):
 * the first IA on libfabric's tcp provider over {@code lo} in this JVM, the second in a peer JVM (the
 * kit's {@link PeerProcess}, control {@link OfiPeerControl}) used here through proxies. Memory the kit
 * gives either IA is a shared file mapping, so the kit reads and writes the peer's registered memory
 * directly; a transport is broken as in {@link OfiTcpFixture} ({@code ss -K} on the connection's port).
 */
public final class OfiTcpTwoJvmFixture implements ConformanceFixture {
    private final OfiProvider provider = new OfiProvider();
    private final OfiTcpFixture sameJvm = new OfiTcpFixture();
    private final SharedMemory memory = SharedMemory.create();
    private final AtomicInteger opened = new AtomicInteger();
    private PeerProcess peer;

    /** Starts the peer JVM. */
    public OfiTcpTwoJvmFixture() {
        peer = startPeer();
    }

    private PeerProcess startPeer() {
        return PeerProcess.start(memory, List.of(), Map.of(), OfiPeerControl.class);
    }

    @Override
    public String name() {
        return "ofi-tcp-2jvm";
    }

    @Override
    public synchronized IaPair openPair() {
        if (!peer.alive()) {
            peer.close();
            peer = startPeer();
        }
        int n = opened.incrementAndGet();
        InterfaceAdapter local = provider.open(new IaSpec("ofi-v2-tcp-lo-a" + n, "tcp lo", "", true, "conformance"),
                64);
        try {
            return new IaPair(local, peer.open("ofi-v2-tcp-lo-b" + n, "tcp lo"));
        } catch (RuntimeException e) {
            local.close();
            throw e;
        }
    }

    @Override
    public MemorySegment allocate(Arena arena, long size) {
        return memory.allocate(arena, size);
    }

    @Override
    public List<SocketAddress> invalidAddresses() {
        return sameJvm.invalidAddresses();
    }

    @Override
    public void breakTransport(Endpoint ep) {
        sameJvm.breakTransport(ep);
    }

    @Override
    public Timing timing() {
        return Timing.DEFAULT;
    }

    @Override
    public synchronized void close() {
        try {
            peer.close();
            provider.deactivate();
            sameJvm.close();
        } finally {
            memory.delete();
        }
    }
}
