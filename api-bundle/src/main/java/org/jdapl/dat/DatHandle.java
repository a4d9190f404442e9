package org.jdapl.dat;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A DAT_HANDLE: the object behind every DAT handle. A handle knows when it has been freed; every
 * call on a freed handle fails INVALID_HANDLE with the subtype of its kind. All handles are safe to
 * use from several threads.
 */
@ProviderType
public interface DatHandle {
    /**
     * {@code dat_get_handle_type}: the kind of object this handle stands for.
     *
     * @throws DatException INVALID_HANDLE if the handle has been freed
     */
    HandleType handleType();

    /**
     * {@code dat_set_consumer_context}: attaches a consumer value (DAT_CONTEXT) to the handle.
     *
     * @throws DatException INVALID_HANDLE if the handle has been freed
     */
    void setConsumerContext(Object context);

    /**
     * {@code dat_get_consumer_context}: the value last set by {@link #setConsumerContext}, or null.
     *
     * @throws DatException INVALID_HANDLE if the handle has been freed
     */
    Object consumerContext();

    /** Whether the object has been freed (or its IA closed); then every other call fails INVALID_HANDLE. */
    boolean isFreed();
}
