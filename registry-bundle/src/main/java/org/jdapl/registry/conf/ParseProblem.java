package org.jdapl.registry.conf;

/**
 * A dat.conf line that was skipped, and why.
 *
 * @param file the file (or text) the line is in
 * @param line the 1-based line number
 * @param message what is wrong with it
 */
public record ParseProblem(String file, int line, String message) {
    @Override
    public String toString() {
        return file + ":" + line + ": " + message;
    }
}
