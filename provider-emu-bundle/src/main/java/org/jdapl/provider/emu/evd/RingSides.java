package org.jdapl.provider.emu.evd;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What the lock-free rings ({@link EventRing}, {@link org.jdapl.provider.emu.RecvRing}) share: the handles of their fields and
 * claiming one side of a ring with a compare-and-set of an int field (0 free, 1 claimed), released by a
 * release store; and the receive ring consumer's clearing of taken slots a block at a time.
 */
public final class RingSides {
    /** Slots cleared together by the consumer (a 64-byte line of compressed references). */
    public static final int BLOCK = 16;

    private RingSides() {
    }

    /**
     * The handle of a ring's field {@code name} (package-private, declared by {@code owner}), found with
     * the ring's own {@code lookup} (the rings live in two packages).
     */
    public static VarHandle field(MethodHandles.Lookup lookup, Class<?> owner, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(owner, name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Claims the side {@code flag} of {@code ring} guards; spins briefly, then yields while another holds it. */
    public static void claim(VarHandle flag, Object ring) {
        int spins = 0;
        while (!flag.compareAndSet(ring, 0, 1)) {
            if (++spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    public static void release(VarHandle flag, Object ring) {
        flag.setRelease(ring, 0);
    }

    /**
     * The consumer has taken every slot below {@code next}: if that ends a block, clears the block's
     * slots from {@code cleared} on and returns the new bound of cleared slots, else {@code cleared}.
     */
    public static long clearTaken(Object[] slots, long next, long cleared) {
        if ((next & (BLOCK - 1)) != 0) {
            return cleared;
        }
        for (long k = Math.max(next - BLOCK, cleared); k < next; k++) {
            slots[(int) k & (slots.length - 1)] = null;
        }
        return next;
    }
}
