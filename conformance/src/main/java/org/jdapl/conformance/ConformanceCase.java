package org.jdapl.conformance;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Objects;
import org.jdapl.conformance.cases.Rig;

/**
 * One conformance case: a method of the kit marked {@link Conformance} with its ID. Run it with
 * {@link ConformanceKit#runCase}.
 */
public final class ConformanceCase {
    private final String id;
    private final Method method;

    ConformanceCase(String id, Method method) {
        this.id = Objects.requireNonNull(id);
        this.method = Objects.requireNonNull(method);
    }

    /** The conformance ID, e.g. {@code CONN_04}. */
    public String id() {
        return id;
    }

    /** The ID and the case's name, e.g. {@code CONN_04_peerRejectIsReportedAndEpDisconnected}. */
    public String displayName() {
        return id + "_" + method.getName();
    }

    /** The section of the ID: CONN, DISC, FREE, LMR, OBJ, SRQ or EP. */
    public String section() {
        return id.substring(0, id.indexOf('_'));
    }

    void invoke(Rig rig) throws Throwable {
        try {
            method.invoke(method.getDeclaringClass().getDeclaredConstructor().newInstance(), rig);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Override
    public String toString() {
        return displayName();
    }
}
