package org.jdapl.conformance.emu.tcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Memory both JVMs see: every segment the kit allocates is a mapping of a file of its own in a
 * directory on tmpfs; the peer maps the same file when a segment of it is named, so bytes the peer's
 * IA moves are visible in the test JVM at once, and the other way round.
 */
public final class SharedMemory {
    private record Mapping(String path, MemorySegment segment) {
    }

    private final Path dir;
    private final AtomicLong next = new AtomicLong();
    private final List<Mapping> mappings = new ArrayList<>();

    private SharedMemory(Path dir) {
        this.dir = dir;
    }

    /** A fresh directory (on /dev/shm where present) for the test JVM. */
    public static SharedMemory create() {
        try {
            Path shm = Path.of("/dev/shm");
            Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
            return new SharedMemory(Files.createTempDirectory(base, "jdapl-emu-tcp-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The peer's view: it maps files it is told about. */
    static SharedMemory peer() {
        return new SharedMemory(null);
    }

    /** {@code size} bytes (at least 1) of a new shared file, unmapped when {@code arena} closes. */
    public MemorySegment allocate(Arena arena, long size) {
        Path file = dir.resolve("seg-" + next.incrementAndGet());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, Math.max(1, size), arena);
            synchronized (mappings) {
                mappings.removeIf(x -> !x.segment().scope().isAlive());
                mappings.add(new Mapping(file.toString(), m));
            }
            return m;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map shared memory " + file, e);
        }
    }

    /**
     * The shared file and offset of {@code s}.
     *
     * @throws IllegalArgumentException for memory that is not shared with the peer
     */
    Rpc.SegmentRef refOf(MemorySegment s) {
        synchronized (mappings) {
            for (int i = mappings.size() - 1; i >= 0; i--) {
                Mapping m = mappings.get(i);
                MemorySegment whole = m.segment();
                if (s.isNative() && whole.scope().isAlive() && s.address() >= whole.address()
                        && s.address() + s.byteSize() <= whole.address() + whole.byteSize()) {
                    return new Rpc.SegmentRef(m.path(), s.address() - whole.address(), s.byteSize());
                }
            }
        }
        throw new IllegalArgumentException("memory at 0x" + Long.toHexString(s.address()) + " (" + s.byteSize()
                + " bytes) is not shared with the peer process");
    }

    /** The segment a reference names, mapping its file on first use. */
    MemorySegment resolve(Rpc.SegmentRef ref) {
        synchronized (mappings) {
            for (int i = mappings.size() - 1; i >= 0; i--) {
                Mapping m = mappings.get(i);
                if (m.path().equals(ref.path()) && m.segment().scope().isAlive()) {
                    return m.segment().asSlice(ref.offset(), ref.size());
                }
            }
            try (FileChannel ch = FileChannel.open(Path.of(ref.path()), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size(), Arena.global());
                mappings.add(new Mapping(ref.path(), m));
                return m.asSlice(ref.offset(), ref.size());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot map shared memory " + ref.path(), e);
            }
        }
    }

    /** Removes the directory and its files (the test JVM, at the end). */
    public void delete() {
        if (dir == null) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + dir, e);
        }
    }
}
