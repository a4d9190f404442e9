package org.jdapl.provider.emu.evd;

import org.jdapl.dat.DatException;
import org.jdapl.dat.EventDispatcher;

/** What an {@link EventQueue} needs of its EVD: whether it lives, and the trigger of its CNO. */
public interface QueueOwner extends EventDispatcher {
    boolean isFreed();

    /** @throws DatException INVALID_HANDLE once the EVD is freed */
    void checkLive();

    /** Triggers the EVD's CNO, if it has one, for an event that wakes no waiter. */
    void triggerCno();
}
