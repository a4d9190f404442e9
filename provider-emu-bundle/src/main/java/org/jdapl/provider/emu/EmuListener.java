package org.jdapl.provider.emu;

import org.jdapl.dat.HandleType;

/**
 * What the three service points (PSP, RSP, CSP) share: the IA they listen on, the EVD their
 * connection requests go to (counted as a user of it), and their end: freed, no longer listening,
 * the EVD released.
 */
abstract class EmuListener extends EmuObject {
    private final EmuIa ia;
    private final EmuEvd evd;
    /** The connection qualifier (PSP, RSP) or port (CSP) listened on. */
    final long qual;

    EmuListener(HandleType type, EmuIa ia, EmuEvd evd, long qual) {
        super(type);
        this.ia = ia;
        this.evd = evd;
        this.qual = qual;
        evd.use();
    }

    @Override
    final EmuIa ia() {
        return ia;
    }

    /** The EVD connection requests are posted on. */
    final EmuEvd evd() {
        return evd;
    }

    /** Stops new requests from arriving here (domain lock held). */
    void stopListening() {
        ia.listeners().stop(qual, this);
    }

    /** Frees the service point (domain lock held): no request arrives here any more (OBJ_06). */
    void destroy() {
        markFreed();
        stopListening();
        evd.unuse();
    }
}
