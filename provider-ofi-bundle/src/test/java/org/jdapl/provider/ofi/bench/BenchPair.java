package org.jdapl.provider.ofi.bench;

import java.net.SocketAddress;

/**
 * Two connected EPs of {@link OfiPingPongBench}: the pinging and writing side in this JVM, the ponging
 * side in this JVM ({@link DatPair}) or in a peer JVM ({@link TwoJvmPair}).
 */
interface BenchPair extends AutoCloseable {
    /** The local IA's address: where fi_pingpong's client finds its server. */
    SocketAddress address();

    /** {@code n} round trips of the pair's size: the half round trip in microseconds. */
    double pingPong(int n) throws InterruptedException;

    /**
     * {@code n} RDMA Writes of the pair's size into the ponging side's region, {@value DatPair#WINDOW}
     * outstanding: MB/s (10^6 bytes per second).
     */
    double writeBandwidth(int n);

    @Override
    void close();
}
