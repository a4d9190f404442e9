package org.jdapl.provider.ofi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shm endpoints open in this process, by name. libfabric's shm provider does not map the region
 * of a peer in the same process: it uses the peer endpoint's own region, which the peer's
 * {@code fi_close} unmaps, so a send to (or the completion of a send to) a local peer whose endpoint
 * is closed would touch unmapped memory. Every send of the RDM path to a local peer is checked here
 * first: a peer name that was local and is no longer open is gone, as if the peer had disconnected.
 * Peers in other processes are mapped by this process and stay mapped until its own close.
 *
 * <p>The names are also those of the endpoints' regions in {@code /dev/shm} (16 MiB each), which shm
 * unlinks at the endpoint's {@code fi_close}. A region outlives its process unless unlinked, so each
 * name is removed once its endpoint is closed ({@link #closed}, also when the close failed), and a
 * JVM shutdown hook removes those of endpoints still open when the JVM exits (an IA never closed).
 * The hook only unlinks names: closing IAs from it could wait on a lock of a thread the exit stopped.
 *
 * <p>Behaviours: OBJ_01.
 */
final class RdmLocal {
    private RdmLocal() {
    }

    private static final Logger LOG = LoggerFactory.getLogger(RdmLocal.class);
    private static final Path SHM = Path.of("/dev/shm");

    private static final Set<String> OPEN = ConcurrentHashMap.newKeySet();
    private static final Set<String> CLOSED = ConcurrentHashMap.newKeySet();
    /** The closes of endpoints that wait for a peer endpoint of this process to close first, by the peer's name. */
    private static final Map<String, List<Runnable>> AFTER = new HashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("jdapl-ofi-shm-regions").unstarted(() -> {
            for (String k : OPEN) {
                unlink(k);
            }
        }));
    }

    static String key(byte[] name) {
        int n = 0;
        while (n < name.length && name[n] != 0) {
            n++;
        }
        return new String(name, 0, n, StandardCharsets.ISO_8859_1);
    }

    static void opened(byte[] name) {
        String k = key(name);
        CLOSED.remove(k);
        OPEN.add(k);
    }

    /**
     * Marks the endpoint closed, before its {@code fi_close}, and first runs the closes that waited for
     * it ({@link #closeAfter}).
     */
    static void closing(byte[] name) {
        String k = key(name);
        List<Runnable> waiting;
        synchronized (AFTER) {
            if (OPEN.remove(k)) {
                CLOSED.add(k);
            }
            waiting = AFTER.remove(k);
        }
        if (waiting != null) {
            waiting.forEach(Runnable::run);
        }
    }

    /**
     * Holds {@code close} (an endpoint's {@code fi_close}) until the endpoint {@code peer} of this
     * process closes, if it is open; false (nothing held) if it is not. shm writes a response into the
     * sender's region and the sender returns the receiver's buffers by its responses
     * ({@code smr_progress_resp_entry} locks the peer's region, 1.17 {@code prov/shm/src/smr_progress.c}):
     * with a peer of this process that region is the peer endpoint's own mapping, which its close
     * unmaps, so an endpoint that closed while its local peer was still open made the peer's progress
     * touch unmapped memory (the one-JVM shm kit's progress thread died in {@code pthread_spin_trylock}
     * after DISC_02). The endpoint whose close is held is unusable for jdapl ({@link #gone}) and its
     * receives are cancelled; it closes first when its peer closes.
     */
    static boolean closeAfter(byte[] peer, Runnable close) {
        String k = key(peer);
        synchronized (AFTER) {
            if (!OPEN.contains(k)) {
                return false;
            }
            AFTER.computeIfAbsent(k, x -> new ArrayList<>()).add(close);
            return true;
        }
    }

    /** The endpoint is closed ({@code fi_close} returned or failed): its region's name is removed. */
    static void closed(byte[] name) {
        unlink(key(name));
    }

    private static void unlink(String k) {
        if (k.isEmpty() || k.indexOf('/') >= 0) {
            return;
        }
        try {
            Files.deleteIfExists(SHM.resolve(k));
        } catch (IOException | SecurityException e) {
            LOG.debug("removing shm region {}: {}", k, e.toString());
        }
    }

    /** Whether {@code name} is an open endpoint of this process. */
    static boolean open(byte[] name) {
        return name != null && OPEN.contains(key(name));
    }

    /** Whether {@code name} was an endpoint of this process that is closed now. */
    static boolean gone(byte[] name) {
        return name != null && CLOSED.contains(key(name));
    }
}
