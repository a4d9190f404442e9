package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the provider reports a failed native call: a creation that fails is INSUFFICIENT_RESOURCES
 * with the subtype of what could not be made and the verbs error; a release that fails while an
 * object is destroyed is logged, and the destruction goes on.
 */
final class NativeErrors {
    private static final Logger LOG = LoggerFactory.getLogger(NativeErrors.class);

    private NativeErrors() {
    }

    /** Runs a release ({@code what} names it); a failure is logged, not thrown. */
    static void quietly(String what, Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.warn("{} failed while closing", what, e);
        }
    }

    /** INSUFFICIENT_RESOURCES of {@code subtype} for the failed call {@code what}. */
    static DatException resources(DatReturnSubtype subtype, String what, VerbsException e) {
        return new DatException(DatReturnType.INSUFFICIENT_RESOURCES, subtype, what + ": " + e.getMessage(), e);
    }
}
