package org.jdapl.provider.ofa;

import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.dat.InterfaceAdapter;

/**
 * Test access to an OFA IA's lock, the one {@code dat_ia_close} holds while it destroys the IA's
 * objects: a device test holds it to stand for a close in progress and sees who waits for it.
 */
public final class IaLocks {
    private IaLocks() {
    }

    /** The lock of {@code ia}, an IA of the OFA provider. */
    public static ReentrantLock of(InterfaceAdapter ia) {
        return ((OfaIa) ia).lock();
    }
}
