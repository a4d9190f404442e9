package org.jdapl.provider.ofi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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

    /** Marks the endpoint closed, before its {@code fi_close}. */
    static void closing(byte[] name) {
        String k = key(name);
        if (OPEN.remove(k)) {
            CLOSED.add(k);
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

    /** Whether {@code name} was an endpoint of this process that is closed now. */
    static boolean gone(byte[] name) {
        return name != null && CLOSED.contains(key(name));
    }
}
