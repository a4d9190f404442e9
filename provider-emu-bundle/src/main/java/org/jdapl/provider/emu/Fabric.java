package org.jdapl.provider.emu;

import java.net.SocketAddress;
import org.jdapl.provider.emu.evd.FabricInput;

/**
 * What the emulated IAs need from a fabric: addresses, finding the IA that holds an address, and the
 * lock domain of a new IA, which orders every state change and data movement of the IAs it joins. The in-JVM
 * {@link org.jdapl.provider.emu.loopback.LoopbackFabric} is one; a fabric between processes implements the same contract.
 * What EVD waiters and pollers need of a fabric's input is {@link FabricInput}.
 */
public interface Fabric extends FabricInput {
    /** The fabric's name as ia_params names it, e.g. {@code loopback}. */
    String name();

    /** The lock domain of a new IA on this fabric (see {@link LockDomain}). */
    LockDomain lockDomain();

    /**
     * Prepares a connect of {@code ia} to {@code remote} before any lock is taken: a fabric whose
     * connections join IAs of this JVM merges their lock domains, so that the request, the accept and
     * the data of the connection are ordered by one lock.
     */
    default void prepareConnect(EmuIa ia, SocketAddress remote) {
    }

    /**
     * Gives {@code ia} an address of its own on the fabric.
     *
     * @throws org.jdapl.dat.DatException INSUFFICIENT_RESOURCES if no address is free
     */
    SocketAddress attach(EmuIa ia);

    /** Releases the address of {@code ia}; connection requests to it become UNREACHABLE. */
    void detach(EmuIa ia);

    /** The open IA holding {@code address}, or null if none holds it. */
    EmuIa resolve(SocketAddress address);

    /**
     * Checks that {@code address} can name a remote IA at all.
     *
     * @throws org.jdapl.dat.DatException INVALID_ADDRESS for an address of a foreign family, an
     *         unresolved name, or a multicast, broadcast or wildcard address
     */
    void checkRemoteAddress(SocketAddress address);

    /** An address of the fabric's range that no IA holds now. */
    SocketAddress unassignedAddress();

    /**
     * Whether a connect of {@code ia} to {@code remote} can start now under the IA's domain lock; false
     * if {@link #prepareConnect} has to run again first (the IA at {@code remote} changed meanwhile).
     */
    default boolean canConnect(EmuIa ia, SocketAddress remote) {
        return true;
    }

    /**
     * Sends the connection request of {@code attempt} (its EP is ACTIVE_CONNECTION_PENDING, domain lock
     * held). The outcome reaches the EP later: {@link EpConnection#established}, {@link EpConnection#rejectedBy} or
     * {@link EpConnection#failAttempt} (UNREACHABLE, NON_PEER_REJECTED), never within this call.
     *
     * @param common whether {@code qual} is the port of a common service point
     * @param portQual the active EP's local port qualifier
     */
    void connect(ConnectAttempt attempt, SocketAddress remote, long qual, boolean common, byte[] data, long portQual);

    /**
     * Listens for a common service point of {@code ia} on {@code at} (domain lock held).
     *
     * @param taken whether a CSP of the IA uses a port already
     * @return the address listened on, with the port chosen if {@code at} had none
     * @throws org.jdapl.dat.DatException INVALID_ADDRESS for an address that is not the IA's, PORT_IN_USE
     */
    java.net.InetSocketAddress listenCommon(EmuIa ia, SocketAddress at, java.util.function.IntPredicate taken);

    /** Stops listening for the common service point on {@code port} (domain lock held). */
    default void stopCommon(int port) {
    }

    /** Waits for the fabric's threads of a detached IA to end; called without the lock. */
    default void stop() {
    }

    /** The transfer hold of the IA was set or lifted (lock held). */
    default void heldChanged() {
    }

    /**
     * Starts the UD exchange of {@code ep} with the IA at {@code remote} on {@code qual} over the
     * fabric's own transport (fabric lock held), its outcome an event on the EP's connect EVD.
     *
     * @return false if the fabric exchanges by finding the target IA in this JVM ({@link #resolve})
     */
    default boolean exchangeDatagrams(EmuUdEp ep, SocketAddress remote, long qual, byte[] privateData) {
        return false;
    }
}
