package org.jdapl.provider.ofa;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** The VarHandles of the provider's lock and state fields. */
final class VarHandles {
    private VarHandles() {
    }

    /**
     * The VarHandle of the field {@code name} of {@code lookup}'s class (its own lookup, so that
     * private fields are found).
     *
     * @throws ExceptionInInitializerError if there is no such field (called from static initialisers)
     */
    static VarHandle field(MethodHandles.Lookup lookup, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
