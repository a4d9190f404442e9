package org.jdapl.provider.ofi;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Removes the shm regions ({@code /dev/shm/jdapl_<pid>_<n>}) of a process a test killed on purpose:
 * a SIGKILL gives the process no chance to close its endpoints, whose close is what unlinks them.
 */
public final class OfiShmRegions {
    private OfiShmRegions() {
    }

    /** Deletes every shm region of the ended process {@code pid}. */
    public static void remove(long pid) throws IOException {
        Path dir = Path.of("/dev/shm");
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, "jdapl_" + pid + "_*")) {
            for (Path p : s) {
                Files.deleteIfExists(p);
            }
        }
    }
}
