package org.jdapl.conformance.cases;

import java.util.Objects;
import java.util.Set;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;

/** The kit's checks: each throws {@link AssertionError} with a message saying what was expected. */
public final class Checks {
    private Checks() {
    }

    /** Fails with {@code message} unless {@code condition} holds. */
    public static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    /** Fails unless {@code actual} equals {@code expected}. */
    public static void equal(Object expected, Object actual, String what) {
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected " + expected + " but was " + actual);
        }
    }

    /** Fails unless {@code actual} is one of {@code allowed}. */
    public static void oneOf(Set<?> allowed, Object actual, String what) {
        if (!allowed.contains(actual)) {
            throw new AssertionError(what + ": expected one of " + allowed + " but was " + actual);
        }
    }

    /** Fails unless the EP is in {@code expected} state (by dat_ep_query). */
    public static void state(Endpoint ep, EpState expected, String what) {
        equal(expected, ep.query().state(), what + " EP state");
    }

    /** A call that must fail. */
    @FunctionalInterface
    public interface Call {
        /** Makes the call. */
        void run();
    }

    /**
     * Makes the call and fails unless it throws a DatException of {@code type} and, if
     * {@code subtype} is not null, that subtype.
     *
     * @return the exception
     */
    public static DatException fails(DatReturnType type, DatReturnSubtype subtype, String what, Call call) {
        try {
            call.run();
        } catch (DatException e) {
            if (e.type() != type || (subtype != null && e.subtype() != subtype)) {
                throw new AssertionError(what + ": expected sync " + type + (subtype == null ? "" : "/" + subtype)
                        + " but got " + e.getMessage(), e);
            }
            return e;
        } catch (RuntimeException e) {
            throw new AssertionError(what + ": expected sync " + type + " but got " + e, e);
        }
        throw new AssertionError(what + ": succeeded, expected sync " + type + (subtype == null ? "" : "/" + subtype));
    }

    /** Makes the call and fails unless it throws a DatException (any type); returns it. */
    public static DatException failsSomehow(String what, Call call) {
        try {
            call.run();
        } catch (DatException e) {
            return e;
        } catch (RuntimeException e) {
            throw new AssertionError(what + ": expected a DatException but got " + e, e);
        }
        throw new AssertionError(what + ": succeeded, expected a sync error");
    }

    /** Makes the call; returns null if it succeeded, or the DatException it threw. */
    public static DatException attempt(String what, Call call) {
        try {
            call.run();
            return null;
        } catch (DatException e) {
            return e;
        } catch (RuntimeException e) {
            throw new AssertionError(what + ": expected success or a DatException but got " + e, e);
        }
    }

    /** Fails if the call throws anything. */
    public static void succeeds(String what, Call call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            throw new AssertionError(what + ": expected success but got " + e.getMessage(), e);
        }
    }
}
