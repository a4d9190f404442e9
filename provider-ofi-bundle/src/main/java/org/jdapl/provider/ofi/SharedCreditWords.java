package org.jdapl.provider.ofi;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The words of a shm connection's receive credits ({@link MsgCredits}) in a file of {@code /dev/shm}
 * that both JVMs map: both sides are on one host (shm reaches no other), so the receiver stores its
 * count of posted receives straight into the sender's mapped word, a store and no libfabric request.
 * A count written as an RDMA Write would cost shm a system call per posted receive: shm moves an RMA
 * without delivery-complete by {@code process_vm_writev} ({@code smr_rma_fast}, 1.17
 * {@code prov/shm/src/smr_rma.c}).
 *
 * <p>Each side creates its own file, {@code jdapl_credits_<pid>_<n>} (64 bytes, mode 0600, the user's
 * as shm's regions are), names it in the credits header of its REQ or ACCEPT (the pid and the number
 * in the header's address and key) and maps the peer's when the header comes. A file is removed when
 * its connection's credits close, by a JVM shutdown hook for those still open, and, for JVMs that
 * were killed, by the first IA of a later process ({@link #sweep}).
 */
final class SharedCreditWords {
    private static final Logger LOG = LoggerFactory.getLogger(SharedCreditWords.class);
    private static final Path SHM = Path.of("/dev/shm");
    private static final String PREFIX = "jdapl_credits_";
    static final long SIZE = 64;
    private static final AtomicLong NUMBERS = new AtomicLong();
    private static final Set<Path> OPEN = ConcurrentHashMap.newKeySet();
    private static final long PID = ProcessHandle.current().pid();

    static {
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("jdapl-ofi-credit-words").unstarted(() -> {
            for (Path p : OPEN) {
                delete(p);
            }
        }));
        sweep();
    }

    /** This side's words: the file's number and its mapping. */
    record Own(long pid, long number, Path path, MemorySegment words) {
    }

    private SharedCreditWords() {
    }

    /** Creates and maps this side's words in {@code arena}; null if {@code /dev/shm} cannot hold them. */
    static Own create(Arena arena) {
        long n = NUMBERS.incrementAndGet();
        Path p = SHM.resolve(PREFIX + PID + "_" + n);
        try (FileChannel ch = FileChannel.open(p, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            OPEN.add(p);
            return new Own(PID, n, p, ch.map(FileChannel.MapMode.READ_WRITE, 0, SIZE, arena));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            LOG.debug("credit words in {}: {}", p, e.toString());
            close(p);
            return null;
        }
    }

    /** Maps the words the peer named ({@code pid}, {@code number}) in {@code arena}. */
    static MemorySegment mapPeer(long pid, long number, Arena arena) throws IOException {
        Path p = SHM.resolve(PREFIX + pid + "_" + number);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() < SIZE) {
                throw new IOException(p + " holds " + ch.size() + " bytes");
            }
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, SIZE, arena);
        }
    }

    /** Removes this side's file (its mappings stay until their arena closes). */
    static void close(Path p) {
        OPEN.remove(p);
        delete(p);
    }

    /** Removes the files of processes that are gone (killed JVMs leave theirs). */
    static void sweep() {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(SHM, PREFIX + "*")) {
            for (Path p : files) {
                String rest = p.getFileName().toString().substring(PREFIX.length());
                int u = rest.indexOf('_');
                try {
                    long pid = Long.parseLong(u < 0 ? rest : rest.substring(0, u));
                    if (ProcessHandle.of(pid).isEmpty()) {
                        delete(p);
                    }
                } catch (NumberFormatException e) {
                    // not one of ours
                }
            }
        } catch (IOException | SecurityException e) {
            LOG.debug("sweeping {}: {}", SHM, e.toString());
        }
    }

    private static void delete(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException | SecurityException e) {
            LOG.debug("removing {}: {}", p, e.toString());
        }
    }
}
