package org.jdapl.conformance.cases;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdapl.conformance.ConformanceFixture;
import org.jdapl.conformance.IaPair;
import org.jdapl.conformance.Timing;
import org.jdapl.dat.InterfaceAdapter;

/**
 * What one case works with: the fixture, the time bounds, and everything the case opens (IA pairs,
 * memory, transfer holds), which {@link #close()} releases whatever happened in the case.
 */
public final class Rig implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ConformanceFixture fixture;
    private final String caseId;
    private final Timing timing;
    private final Arena arena = Arena.ofShared();
    private final List<IaPair> pairs = new CopyOnWriteArrayList<>();
    private final Set<InterfaceAdapter> held = ConcurrentHashMap.newKeySet();
    private final List<String> notes = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    /** A rig for one run of the case {@code caseId} against the fixture's provider. */
    public Rig(ConformanceFixture fixture, String caseId) {
        this.fixture = fixture;
        this.caseId = caseId;
        this.timing = fixture.timing();
    }

    /** The fixture under test. */
    public ConformanceFixture fixture() {
        return fixture;
    }

    /** The case's ID. */
    public String caseId() {
        return caseId;
    }

    /** How long to wait for an expected event. */
    public Duration eventTimeout() {
        return timing.eventTimeout();
    }

    /** How long to watch for events that must not come. */
    public Duration grace() {
        return timing.grace();
    }

    /** The connect timeout for connects that are meant to time out, in microseconds. */
    public long shortConnectTimeoutMicros() {
        return timing.connectTimeout().toNanos() / 1000;
    }

    /** A connect timeout no case should reach, in microseconds (four event timeouts). */
    public long longConnectTimeoutMicros() {
        return timing.eventTimeout().multipliedBy(4).toNanos() / 1000;
    }

    /**
     * Opens a fresh pair of IAs through the fixture, each with a PZ and its own EVDs.
     *
     * @return the active side first, the passive side second
     */
    public Side[] pair() {
        if (closed) {
            throw new IllegalStateException("the case's rig is closed");
        }
        IaPair pair = fixture.openPair();
        pairs.add(pair);
        return new Side[] {new Side(this, pair.first()), new Side(this, pair.second())};
    }

    /** A fresh connection qualifier, unlikely to be used by anyone else. */
    public long connQual() {
        return 0x1000_0000L + (RANDOM.nextLong() & 0x3fff_ffff_ffffL);
    }

    /** Random bytes. */
    public byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    /** A native segment of {@code size} bytes (page aligned) filled with {@code fill}, freed when the case ends. */
    public MemorySegment segment(long size, byte fill) {
        MemorySegment s = fixture.allocate(arena, Math.max(size, 1)).asSlice(0, size);
        s.fill(fill);
        return s;
    }

    /** Holds or releases the transfers of {@code ia} through the fixture; released again at the end of the case. */
    public void hold(InterfaceAdapter ia, boolean hold) {
        fixture.holdTransfers(ia, hold);
        if (hold) {
            held.add(ia);
        } else {
            held.remove(ia);
        }
    }

    /** Adds a note to the case's report line (e.g. a situation the provider could not show). */
    public void note(String note) {
        notes.add(note);
    }

    /** The notes, joined. */
    public String notes() {
        return String.join("; ", notes);
    }

    /** Lifts holds, closes every IA (abrupt, freeing all their objects) and frees the memory. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<RuntimeException> errors = new ArrayList<>();
        for (InterfaceAdapter ia : held) {
            try {
                fixture.holdTransfers(ia, false);
            } catch (RuntimeException e) {
                errors.add(e);
            }
        }
        held.clear();
        for (IaPair pair : pairs) {
            try {
                pair.close();
            } catch (RuntimeException e) {
                errors.add(e);
            }
        }
        try {
            arena.close();
        } catch (RuntimeException e) {
            errors.add(e);
        }
        if (!errors.isEmpty()) {
            RuntimeException first = errors.getFirst();
            errors.subList(1, errors.size()).forEach(first::addSuppressed);
            throw first;
        }
    }
}
