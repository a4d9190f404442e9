package org.jdapl.conformance;

/** How a conformance case ended. */
public enum Outcome {
    /** Every check of the case held. */
    PASS,
    /** A check failed, the provider threw something unexpected, or the case did not end in time. */
    FAIL,
    /** The provider or fixture cannot produce the situation; the reason says why. */
    SKIP
}
