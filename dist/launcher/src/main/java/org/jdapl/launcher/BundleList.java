package org.jdapl.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code conf/bundles.list}: the bundles of the application, one a line, {@code level [shell] file},
 * where {@code file} is in {@code bundle/}. A bundle marked {@code shell} is installed and resolved
 * always but started only for the interactive shell.
 */
final class BundleList {
    /** One bundle: its jar, start level, and whether only the shell starts it. */
    record Entry(Path jar, int startLevel, boolean shellOnly) {
    }

    private BundleList() {
    }

    /**
     * Reads the list.
     *
     * @throws IOException if the list cannot be read, a line is malformed, or a jar is missing
     */
    static List<Entry> read(Path list, Path bundleDir) throws IOException {
        List<Entry> entries = new ArrayList<>();
        int lineNumber = 0;
        for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
            lineNumber++;
            String text = line.strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            String[] words = text.split("\\s+");
            boolean shell = words.length == 3 && words[1].equals("shell");
            if (words.length != 2 && !shell) {
                throw new IOException(list + ":" + lineNumber + ": expected 'level [shell] file', got '" + text + "'");
            }
            int level;
            try {
                level = Integer.parseInt(words[0]);
            } catch (NumberFormatException e) {
                throw new IOException(list + ":" + lineNumber + ": '" + words[0] + "' is not a start level");
            }
            if (level < 1) {
                throw new IOException(list + ":" + lineNumber + ": start level " + level + " is under 1");
            }
            Path jar = bundleDir.resolve(words[words.length - 1]);
            if (!Files.isRegularFile(jar)) {
                throw new IOException(list + ":" + lineNumber + ": " + jar + " is missing");
            }
            entries.add(new Entry(jar, level, shell));
        }
        if (entries.isEmpty()) {
            throw new IOException(list + " names no bundle");
        }
        return entries;
    }
}
