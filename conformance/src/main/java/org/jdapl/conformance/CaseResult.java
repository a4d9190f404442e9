package org.jdapl.conformance;

import java.time.Duration;

/**
 * The result of one conformance case.
 *
 * @param id the conformance ID, e.g. {@code CONN_04}
 * @param displayName the ID and the case's name, e.g. {@code CONN_04_peerRejectIsReportedAndEpDisconnected}
 * @param outcome PASS, FAIL or SKIP
 * @param reason why it failed or was skipped, or a note on a pass (empty if none); one line
 * @param elapsed how long the case ran
 * @param failure what was thrown for a FAIL or SKIP, or null
 */
public record CaseResult(String id, String displayName, Outcome outcome, String reason, Duration elapsed,
                         Throwable failure) {
    /** Flattens the reason to one line. */
    public CaseResult {
        reason = reason == null ? "" : reason.replaceAll("\\s+", " ").strip();
    }

    /** The report line: {@code ID OUTCOME reason}. */
    public String reportLine() {
        return reason.isEmpty() ? id + " " + outcome : id + " " + outcome + " " + reason;
    }
}
