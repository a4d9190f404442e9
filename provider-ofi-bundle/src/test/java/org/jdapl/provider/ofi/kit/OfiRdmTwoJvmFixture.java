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
 * The ofi provider under the kit on an RDM provider with the second IA of each pair in a peer JVM
 * (the kit's {@link PeerProcess}, control {@link OfiPeerControl}), e.g. {@code ofi-shm}: shared
 * memory between two processes.
 */
public final class OfiRdmTwoJvmFixture implements ConformanceFixture {
    private final OfiProvider provider = new OfiProvider();
    private final OfiRdmFixture sameJvm;
    private final SharedMemory memory = SharedMemory.create();
    private final AtomicInteger opened = new AtomicInteger();
    private final String name;
    private final String iaParams;
    private PeerProcess peer;

    /** Starts the peer JVM. */
    public OfiRdmTwoJvmFixture(String name, String iaParams) {
        this.name = name;
        this.iaParams = iaParams;
        this.sameJvm = new OfiRdmFixture(name, iaParams);
        peer = startPeer();
    }

    private PeerProcess startPeer() {
        return PeerProcess.start(memory, List.of(), Map.of(), OfiPeerControl.class);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public synchronized IaPair openPair() {
        if (!peer.alive()) {
            peer.close();
            peer = startPeer();
        }
        int n = opened.incrementAndGet();
        InterfaceAdapter local = provider.open(new IaSpec("ofi-v2-" + name + "-a" + n, iaParams, "", true,
                "conformance"), 64);
        try {
            return new IaPair(local, peer.open("ofi-v2-" + name + "-b" + n, iaParams));
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
