package org.jdapl.provider.emu;

/**
 * A connection between two EPs on the loopback fabric. Both EPs share the fabric lock, so a request
 * is executed by the initiator directly against the peer's memory and queues.
 */
final class LocalLink extends Link {
    private final EmuEp active;
    private final EmuEp passive;
    private boolean open = true;

    LocalLink(EmuEp active, EmuEp passive) {
        this.active = active;
        this.passive = passive;
    }

    EmuEp other(EmuEp ep) {
        return ep == active ? passive : active;
    }

    @Override
    boolean isOpen() {
        return open;
    }

    @Override
    void close() {
        open = false;
    }

    @Override
    void abort(EmuEp from, boolean broken) {
        open = false;
        other(from).remoteAbort(broken);
    }

    @Override
    void notifyDisconnect(EmuEp from) {
        other(from).peerDisconnectNotification();
    }

    @Override
    void receivePosted(EmuEp from) {
        other(from).kick();
    }

    @Override
    void pump(EmuEp from) {
        from.pumpLocal(other(from));
    }
}
