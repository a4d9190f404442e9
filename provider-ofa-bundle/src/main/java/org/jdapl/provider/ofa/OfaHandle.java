package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.HandleType;

/**
 * What every OFA object shares: its kind, its consumer context and whether it has been freed.
 * After free every call fails INVALID_HANDLE with the subtype of its kind, and so does a second free.
 *
 * <p>Behaviours: FREE_05, LMR_03.
 */
abstract class OfaHandle implements DatHandle {
    private static final VarHandle FREED = VarHandles.field(MethodHandles.lookup(), "freed", boolean.class);

    private final HandleType type;
    /**
     * Set once, by {@link #markFreed}. A field of its own rather than an {@code AtomicBoolean}: every
     * post and every completion reads it, and the read is then one load instead of two.
     */
    private volatile boolean freed;
    private volatile Object consumerContext;

    OfaHandle(HandleType type) {
        this.type = type;
    }

    @Override
    public HandleType handleType() {
        live();
        return type;
    }

    @Override
    public void setConsumerContext(Object context) {
        live();
        consumerContext = context;
    }

    @Override
    public Object consumerContext() {
        live();
        return consumerContext;
    }

    @Override
    public boolean isFreed() {
        return freed;
    }

    /** Fails INVALID_HANDLE if the object has been freed. */
    final void live() {
        if (freed) {
            throw type.invalid(type + " handle has been freed");
        }
    }

    /** Marks the object freed; false if it already was (a second free). */
    final boolean markFreed() {
        return FREED.compareAndSet(this, false, true);
    }

    /** The INVALID_HANDLE error of a second free. */
    final DatException alreadyFreed() {
        return type.invalid(type + " handle has already been freed");
    }

    final HandleType type() {
        return type;
    }
}
