package org.jdapl.provider.emu;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.HandleType;

/**
 * What every emulated DAT object shares: its kind, whether it is freed, and the consumer context
 * ({@code dat_set_consumer_context}, {@code dat_get_consumer_context}, {@code dat_get_handle_type}).
 */
public abstract class EmuObject implements DatHandle {
    private final HandleType type;
    private volatile boolean freed;
    private volatile Object consumerContext;

    EmuObject(HandleType type) {
        this.type = type;
    }

    /** The IA the object belongs to. */
    abstract EmuIa ia();

    /** The kind of object, also once freed. */
    HandleType kind() {
        return type;
    }

    @Override
    public HandleType handleType() {
        checkLive();
        return type;
    }

    @Override
    public void setConsumerContext(Object context) {
        checkLive();
        consumerContext = context;
    }

    @Override
    public Object consumerContext() {
        checkLive();
        return consumerContext;
    }

    @Override
    public boolean isFreed() {
        return freed;
    }

    /**
     * Fails if the object is freed.
     *
     * @throws DatException INVALID_HANDLE with the subtype of the object's kind
     *
     * <p>Behaviours: CONN_12, FREE_05, LMR_03: a freed or foreign handle fails INVALID_HANDLE.
     */
    public void checkLive() {
        if (freed) {
            throw invalidHandle();
        }
    }

    DatException invalidHandle() {
        return type.invalid(type + " handle is freed or its IA is closed");
    }

    /**
     * {@code dat_*_free} of an object without further checks: checks the handle, runs {@code destroy}
     * and drops the object from its IA, under the IA's domain lock.
     */
    final void freeWith(Runnable destroy) {
        ia().locked(() -> {
            checkLive();
            destroy.run();
            ia().forget(this);
        });
    }

    void markFreed() {
        freed = true;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "@" + Integer.toHexString(System.identityHashCode(this))
                + (freed ? "(freed)" : "");
    }
}
