package org.jdapl.conformance;

import java.io.Serial;

/**
 * Thrown by a case, or by a fixture asked for something its provider cannot produce, to report the
 * case as SKIP with the reason. A skip is never a pass: the report names why the situation the
 * conformance ID describes could not be produced.
 */
public class Skip extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A skip with the reason the report shows. */
    public Skip(String reason) {
        super(reason);
    }
}
