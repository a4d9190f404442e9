package org.jdapl.registry.conf;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads dat.conf with uDAPL's grammar: one entry a line, eight fields separated by white space,
 * a field may be double-quoted to hold white space (inside quotes a backslash escapes the next
 * character), {@code #} outside quotes starts a comment that runs to the end of the line, blank
 * lines are ignored. A line that does not parse is logged with its line number and skipped; the
 * rest of the file still loads.
 *
 * <p>Hostile input is bounded: a line longer than {@link #MAX_LINE_BYTES} bytes, a line with a NUL
 * byte, control characters or bytes that are not UTF-8, and an unterminated quote each skip their
 * line with a message; a file over {@link #MAX_FILE_BYTES} bytes or one that is not a regular file
 * loads nothing. Memory use is bounded by these limits; no exception escapes.
 */
public final class DatConfParser {
    /** The longest line read, in bytes; longer lines are skipped. */
    public static final int MAX_LINE_BYTES = 4096;
    /** The largest file read, in bytes; a larger file loads nothing. */
    public static final long MAX_FILE_BYTES = 1L << 20;
    /** How many skipped lines are kept (and logged) one by one; the rest are only counted. */
    public static final int MAX_PROBLEMS_KEPT = 100;

    private static final Logger LOG = LoggerFactory.getLogger(DatConfParser.class);

    private DatConfParser() {
    }

    /**
     * Reads a dat.conf file. Never throws for bad content or I/O failures: they are reported in the
     * result ({@link ParseResult#error()} for the whole file, {@link ParseResult#problems()} per line).
     */
    public static ParseResult readFile(Path path) {
        String name = path.toString();
        try {
            if (!Files.exists(path)) {
                return failed(name, "does not exist");
            }
            if (!Files.isRegularFile(path)) {
                return failed(name, "is not a regular file");
            }
            if (!Files.isReadable(path)) {
                return failed(name, "is not readable (permissions)");
            }
            long size = Files.size(path);
            if (size > MAX_FILE_BYTES) {
                return failed(name, "is " + size + " bytes, more than the " + MAX_FILE_BYTES
                        + " a dat.conf may have");
            }
            try (InputStream in = Files.newInputStream(path)) {
                return parse(in, name);
            }
        } catch (IOException | SecurityException e) {
            return failed(name, "cannot be read: " + e);
        }
    }

    /** Parses dat.conf text, e.g. from tests or configuration; {@code name} names it in messages. */
    public static ParseResult parse(String text, String name) {
        try {
            return parse(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), name);
        } catch (IOException e) {
            throw new AssertionError("a byte array does not fail", e);
        }
    }

    /**
     * Parses dat.conf bytes from a stream (read up to {@link #MAX_FILE_BYTES} + 1 bytes, then the
     * whole input is rejected).
     *
     * @throws IOException if the stream fails
     */
    public static ParseResult parse(InputStream in, String name) throws IOException {
        return new Run(name).read(in);
    }

    private static ParseResult failed(String name, String why) {
        String message = "dat.conf " + name + " " + why + "; nothing is loaded";
        LOG.error(message);
        return ParseResult.failed(message);
    }

    /** One pass over one input. */
    private static final class Run {
        private final String name;
        private final List<DatConfEntry> entries = new ArrayList<>();
        private final List<ParseProblem> problems = new ArrayList<>();
        private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        private final byte[] line = new byte[MAX_LINE_BYTES];
        private int length;
        private boolean overlong;
        private int lineNumber;
        private int problemCount;

        Run(String name) {
            this.name = name;
        }

        ParseResult read(InputStream in) throws IOException {
            byte[] buffer = new byte[8192];
            long total = 0;
            int n;
            while ((n = in.read(buffer)) > 0) {
                total += n;
                if (total > MAX_FILE_BYTES) {
                    return failed(name, "has more than " + MAX_FILE_BYTES + " bytes, more than a dat.conf may have");
                }
                for (int i = 0; i < n; i++) {
                    byte b = buffer[i];
                    if (b == '\n') {
                        endLine();
                    } else if (length < MAX_LINE_BYTES) {
                        line[length++] = b;
                    } else {
                        overlong = true;
                    }
                }
            }
            if (length > 0 || overlong) {
                endLine();
            }
            if (problemCount > MAX_PROBLEMS_KEPT) {
                LOG.warn("dat.conf {}: {} more lines skipped", name, problemCount - MAX_PROBLEMS_KEPT);
            }
            return new ParseResult(entries, problems, problemCount, lineNumber, null);
        }

        private void endLine() {
            lineNumber++;
            try {
                String error = parseLine();
                if (error != null) {
                    skip(error);
                }
            } finally {
                length = 0;
                overlong = false;
            }
        }

        /** Parses the current line; returns why it is skipped, or null. */
        private String parseLine() {
            if (overlong) {
                return "is longer than " + MAX_LINE_BYTES + " bytes";
            }
            int end = length;
            if (end > 0 && line[end - 1] == '\r') {
                end--;
            }
            for (int i = 0; i < end; i++) {
                if (line[i] == 0) {
                    return "contains a NUL byte at column " + (i + 1) + " (binary data?)";
                }
            }
            String text;
            try {
                text = decoder.reset().decode(ByteBuffer.wrap(line, 0, end)).toString();
            } catch (MalformedInputException e) {
                return "is not UTF-8 text (binary data?)";
            } catch (CharacterCodingException e) {
                return "is not UTF-8 text: " + e.getMessage();
            }
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if ((c < ' ' && !isSpace(c)) || c == 0x7f) {
                    return String.format("contains control character 0x%02x at column %d (binary data?)", (int) c,
                            i + 1);
                }
            }
            List<String> fields = new ArrayList<>(8);
            String error = tokenize(text, fields);
            if (error != null) {
                return error;
            }
            if (fields.isEmpty()) {
                return null;
            }
            try {
                entries.add(DatConfEntry.of(fields, name + ":" + lineNumber));
                return null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }

        private void skip(String message) {
            problemCount++;
            if (problems.size() < MAX_PROBLEMS_KEPT) {
                ParseProblem problem = new ParseProblem(name, lineNumber, message);
                problems.add(problem);
                LOG.warn("dat.conf {} line {} skipped: {}", name, lineNumber, message);
            }
        }
    }

    /**
     * Splits a line into fields; returns an error message or null. A closing quote must be followed
     * by white space, a comment or the end of the line.
     */
    static String tokenize(CharSequence text, List<String> fields) {
        int n = text.length();
        int i = 0;
        while (true) {
            while (i < n && isSpace(text.charAt(i))) {
                i++;
            }
            if (i == n || text.charAt(i) == '#') {
                return null;
            }
            if (fields.size() > DatConfEntry.FIELD_NAMES.size()) {
                return "has more than " + DatConfEntry.FIELD_NAMES.size() + " fields";
            }
            if (text.charAt(i) == '"') {
                int start = i++;
                StringBuilder field = new StringBuilder();
                while (true) {
                    if (i == n) {
                        return "has an unterminated quote starting at column " + (start + 1);
                    }
                    char c = text.charAt(i);
                    if (c == '\\') {
                        if (i + 1 == n) {
                            return "has an unterminated quote starting at column " + (start + 1);
                        }
                        field.append(text.charAt(i + 1));
                        i += 2;
                    } else if (c == '"') {
                        i++;
                        break;
                    } else {
                        field.append(c);
                        i++;
                    }
                }
                if (i < n && !isSpace(text.charAt(i)) && text.charAt(i) != '#') {
                    return "has text right after the closing quote at column " + i;
                }
                fields.add(field.toString());
            } else {
                int start = i;
                while (i < n && !isSpace(text.charAt(i)) && text.charAt(i) != '#') {
                    i++;
                }
                fields.add(text.subSequence(start, i).toString());
            }
        }
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == 0x0b;
    }
}
