package org.jdapl.conformance;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.util.List;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.InterfaceAdapter;

/**
 * What the kit needs from a provider under test. A fixture opens IAs and, where the provider has
 * test hooks, produces situations a consumer cannot (a broken transport, transfers held in
 * progress). Every optional capability has a default that throws {@link Skip} with the reason, so
 * the cases that need it are reported as SKIP, never as PASS.
 *
 * <p>A fixture used from {@link ConformanceMain} needs a public constructor without arguments.
 */
public interface ConformanceFixture extends AutoCloseable {
    /** The name the report is filed under, e.g. {@code emu-loopback}. */
    String name();

    /**
     * Opens two IAs that reach each other (for each, {@link #addressOf} of the other is an address
     * its endpoints can connect to). The kit closes the pair at the end of each case.
     */
    IaPair openPair();

    /** The address peers connect to; by default {@code ia.query().attributes().address()}. */
    default SocketAddress addressOf(InterfaceAdapter ia) {
        return ia.query().attributes().address();
    }

    /**
     * An address of the provider's kind that names no reachable IA, so that a connect to it ends in
     * CONNECTION_EVENT_UNREACHABLE.
     *
     * @throws Skip if the fixture cannot name one
     */
    default SocketAddress unreachableAddress() {
        throw new Skip("fixture " + name() + " names no unreachable address");
    }

    /**
     * Addresses the provider can tell are invalid without any traffic, so that dat_ep_connect fails
     * sync INVALID_ADDRESS. An empty list makes the case SKIP.
     */
    default List<SocketAddress> invalidAddresses() {
        return List.of();
    }

    /**
     * Breaks the transport under the connection of {@code ep} as a cut link or a dead peer process
     * does, so that both ends see the failure.
     *
     * @throws Skip if the fixture cannot break a transport
     */
    default void breakTransport(Endpoint ep) {
        throw new Skip("fixture " + name() + " cannot break a transport");
    }

    /** Whether {@link #holdTransfers} works. */
    default boolean canHoldTransfers() {
        return false;
    }

    /**
     * While {@code hold} is true, data transfers of the endpoints of {@code ia} stay in progress:
     * posted DTOs start but neither move data nor complete until the hold is lifted.
     *
     * @throws Skip if the fixture cannot hold transfers
     */
    default void holdTransfers(InterfaceAdapter ia, boolean hold) {
        throw new Skip("fixture " + name() + " cannot hold transfers in progress");
    }

    /**
     * Memory for a case, at least {@code size} bytes, page aligned, released when {@code arena} closes;
     * by default native memory of the arena. A fixture whose second IA lives in another process returns
     * memory that process maps too, so that the kit sees the bytes its IA moves.
     */
    default MemorySegment allocate(Arena arena, long size) {
        return arena.allocate(size, 4096);
    }

    /** A message of a connection's setup that carries private data. */
    enum PrivateDataCarrier {
        /** The connect request ({@code dat_ep_connect}). */
        CONNECT,
        /** The accept ({@code dat_cr_accept}). */
        ACCEPT,
        /** The consumer's reject ({@code dat_cr_reject}). */
        REJECT
    }

    /**
     * What the remote consumer gets when {@code sent} is the private data of a connect, accept or
     * reject (CONN_10, CONN_13): by default exactly the bytes sent. A provider whose wire carries a
     * fixed-size buffer and no length (OFED uDAPL's convention on IB and RoCE) hands the remote
     * consumer that whole buffer: the bytes sent, byte for byte, then zeros.
     *
     * @since 1.1
     */
    default byte[] deliveredPrivateData(PrivateDataCarrier carrier, byte[] sent) {
        return sent;
    }

    /**
     * Why the provider cannot report {@code DAT_DTO_ERR_REMOTE_ACCESS} at the initiator of a remote
     * RDMA Read or Write that the target refuses (a freed key, bounds, rights), or null if it can
     * (the default). Only for a transport that carries no status for a refused RMA, so that the
     * initiator's DTO is flushed with the connection like any other: LMR_05 and LMR_06 then accept
     * FLUSHED for that DTO, check everything else (the connection broken at the initiator, ended at
     * the target, no byte touched) and report SKIP with this reason.
     *
     * @since 1.2
     */
    default String noRemoteAccessStatus() {
        return null;
    }

    /** The time bounds for this provider; {@link Timing#DEFAULT} unless a provider is slower. */
    default Timing timing() {
        return Timing.DEFAULT;
    }

    /** Releases what the fixture holds (e.g. the provider instance); by default nothing. */
    @Override
    default void close() {
    }
}
