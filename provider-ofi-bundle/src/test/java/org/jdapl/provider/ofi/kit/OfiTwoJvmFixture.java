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
 * The ofi provider under the kit with the two IAs of each pair in two processes: the first IA in this
 * JVM, the second in a peer JVM (the kit's {@link PeerProcess}, control {@link OfiPeerControl}) used
 * here through proxies, as the emulated provider's {@code EmuTcpFixture} does. Memory the kit gives
 * either IA is a shared file mapping, so the kit reads and writes the peer's registered memory
 * directly; invalid addresses and breaking a transport are the same-JVM fixture's ({@link OfiTcpFixture}:
 * {@code ss -K} on the connection's port; {@link OfiRdmFixture}: the control path of the EP's connection cut both ways).
 */
public final class OfiTwoJvmFixture implements ConformanceFixture {
    private final OfiProvider provider = new OfiProvider();
    private final ConformanceFixture sameJvm;
    private final SharedMemory memory = SharedMemory.create();
    private final AtomicInteger opened = new AtomicInteger();
    private final String name;
    private final String iaName;
    private final String iaParams;
    private PeerProcess peer;

    /** Starts the peer JVM; IAs are named {@code iaName-a<n>} and {@code iaName-b<n>}. */
    private OfiTwoJvmFixture(String name, String iaName, String iaParams, ConformanceFixture sameJvm) {
        this.name = name;
        this.iaName = iaName;
        this.iaParams = iaParams;
        this.sameJvm = sameJvm;
        peer = startPeer();
    }

    /** {@code ofi-tcp-2jvm}: libfabric's tcp provider over {@code lo}, MSG endpoints. */
    public static OfiTwoJvmFixture tcp() {
        return new OfiTwoJvmFixture("ofi-tcp-2jvm", "ofi-v2-tcp-lo", "tcp lo", new OfiTcpFixture());
    }

    /** An RDM provider ({@code ia_params} such as {@code shm}), the report named {@code name}. */
    public static OfiTwoJvmFixture rdm(String name, String iaParams) {
        return new OfiTwoJvmFixture(name, "ofi-v2-" + name, iaParams, new OfiRdmFixture(name, iaParams));
    }

    /** The peer JVM, with this JVM's RDM keepalive bound where the tests set one. */
    private PeerProcess startPeer() {
        String keepalive = System.getProperty(KEEPALIVE);
        return PeerProcess.start(memory, List.of(), keepalive == null ? Map.of() : Map.of(KEEPALIVE, keepalive),
                OfiPeerControl.class);
    }

    private static final String KEEPALIVE = "jdapl.ofi.rdm.keepaliveMillis";

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
        InterfaceAdapter local = provider.open(new IaSpec(iaName + "-a" + n, iaParams, "", true, "conformance"), 64);
        try {
            return new IaPair(local, peer.open(iaName + "-b" + n, iaParams));
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
    public SocketAddress unreachableAddress() {
        return sameJvm.unreachableAddress();
    }

    @Override
    public void breakTransport(Endpoint ep) {
        sameJvm.breakTransport(ep);
    }

    @Override
    public String noRemoteAccessStatus() {
        return sameJvm.noRemoteAccessStatus();
    }

    @Override
    public Timing timing() {
        return Timing.DEFAULT;
    }

    @Override
    public synchronized void close() {
        try {
            if (peer.alive()) {
                try {
                    peer.control("close", new Class<?>[0]);
                } catch (RuntimeException e) {
                    // the peer is gone; PeerProcess.close ends what is left
                }
            }
            peer.close();
            provider.deactivate();
            sameJvm.close();
        } finally {
            memory.delete();
        }
    }
}
