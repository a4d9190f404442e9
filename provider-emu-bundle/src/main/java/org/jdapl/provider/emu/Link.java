package org.jdapl.provider.emu;

/**
 * An established connection between two EPs. Data moves only while it is open; the first side
 * that reaches DISCONNECTED closes it for both, so no byte moves on a half-closed connection.
 */
final class Link {
    private final EmuEp active;
    private final EmuEp passive;
    private boolean open = true;

    Link(EmuEp active, EmuEp passive) {
        this.active = active;
        this.passive = passive;
    }

    EmuEp other(EmuEp ep) {
        return ep == active ? passive : active;
    }

    boolean isOpen() {
        return open;
    }

    void close() {
        open = false;
    }
}
