package org.jdapl.conformance;

import java.time.Duration;

/**
 * The time bounds the kit uses with a provider.
 *
 * @param eventTimeout how long a case waits for an event it expects
 * @param grace how long a case waits to see that no further event arrives
 * @param caseTimeout the most one case may run before it is failed
 * @param connectTimeout the connect timeout used where a case wants a connect to time out
 */
public record Timing(Duration eventTimeout, Duration grace, Duration caseTimeout, Duration connectTimeout) {
    /** Bounds fit for an in-process provider: 5 s per event, 200 ms grace, 60 s per case, 300 ms connect. */
    public static final Timing DEFAULT = new Timing(Duration.ofSeconds(5), Duration.ofMillis(200),
            Duration.ofSeconds(60), Duration.ofMillis(300));

    /**
     * Checks the bounds.
     *
     * @throws IllegalArgumentException for a missing or non-positive bound
     */
    public Timing {
        for (Duration d : new Duration[] {eventTimeout, grace, caseTimeout, connectTimeout}) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("time bounds must be positive: " + d);
            }
        }
    }
}
