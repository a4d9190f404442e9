package org.jdapl.provider.ofi;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shm endpoints open in this process, by name. libfabric's shm provider does not map the region
 * of a peer in the same process: it uses the peer endpoint's own region, which the peer's
 * {@code fi_close} unmaps, so a send to (or the completion of a send to) a local peer whose endpoint
 * is closed would touch unmapped memory. Every send of the RDM path to a local peer is checked here
 * first: a peer name that was local and is no longer open is gone, as if the peer had disconnected.
 * Peers in other processes are mapped by this process and stay mapped until its own close.
 */
final class RdmLocal {
    private RdmLocal() {
    }

    private static final Set<String> OPEN = ConcurrentHashMap.newKeySet();
    private static final Set<String> CLOSED = ConcurrentHashMap.newKeySet();

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

    /** Whether {@code name} was an endpoint of this process that is closed now. */
    static boolean gone(byte[] name) {
        return name != null && CLOSED.contains(key(name));
    }
}
