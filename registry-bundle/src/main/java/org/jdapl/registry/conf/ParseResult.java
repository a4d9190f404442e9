package org.jdapl.registry.conf;

import java.util.List;

/**
 * What a dat.conf parse produced: the well-formed entries in file order and the skipped lines.
 *
 * @param entries the entries, in file order
 * @param problems the first skipped lines (at most {@link DatConfParser#MAX_PROBLEMS_KEPT})
 * @param problemCount how many lines were skipped in all
 * @param lines how many lines were read
 * @param error a file-level failure (unreadable, too large, not a regular file); when set, nothing
 *        is loaded and {@code entries} is empty
 */
public record ParseResult(List<DatConfEntry> entries, List<ParseProblem> problems, int problemCount, int lines,
                          String error) {
    /** Copies the lists. */
    public ParseResult {
        entries = List.copyOf(entries);
        problems = List.copyOf(problems);
    }

    /** A failure to read the whole file: nothing is loaded. */
    public static ParseResult failed(String error) {
        return new ParseResult(List.of(), List.of(), 0, 0, error);
    }

    /** Whether the file could be read (lines may still have been skipped). */
    public boolean ok() {
        return error == null;
    }
}
