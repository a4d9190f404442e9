package org.jdapl.provider.ofa;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.HandleType;

/**
 * What every OFA object shares: its kind, its consumer context and whether it has been freed.
 * After free every call fails INVALID_HANDLE with the subtype of its kind.
 */
abstract class OfaHandle implements DatHandle {
    private final HandleType type;
    private final AtomicBoolean freed = new AtomicBoolean();
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
        return freed.get();
    }

    /** Fails INVALID_HANDLE if the object has been freed. */
    final void live() {
        if (freed.get()) {
            throw type.invalid(type + " handle has been freed");
        }
    }

    /** Marks the object freed; false if it already was (a second free). */
    final boolean markFreed() {
        return freed.compareAndSet(false, true);
    }

    /** The INVALID_HANDLE error of a second free. */
    final DatException alreadyFreed() {
        return type.invalid(type + " handle has already been freed");
    }

    final HandleType type() {
        return type;
    }
}
