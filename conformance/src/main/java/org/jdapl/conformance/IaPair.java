package org.jdapl.conformance;

import org.jdapl.dat.InterfaceAdapter;

/**
 * Two open IAs that reach each other. Closing the pair closes both IAs abruptly, which frees every
 * object they created.
 *
 * @param first the IA the kit uses as the active (connecting) side
 * @param second the IA the kit uses as the passive (listening) side
 */
public record IaPair(InterfaceAdapter first, InterfaceAdapter second) implements AutoCloseable {
    /**
     * Checks that both IAs are there and distinct.
     *
     * @throws IllegalArgumentException otherwise
     */
    public IaPair {
        if (first == null || second == null || first == second) {
            throw new IllegalArgumentException("an IA pair needs two distinct IAs");
        }
    }

    /** {@code dat_ia_close} (abrupt) of both IAs; an IA already closed is left alone. */
    @Override
    public void close() {
        try {
            first.close();
        } finally {
            second.close();
        }
    }
}
