package org.jdapl.provider.ofi.fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the JVM's signal handlers across the creation of a libfabric endpoint. libfabric 1.17's shm
 * provider installs handlers for SIGSEGV, SIGBUS, SIGTERM and SIGINT at its first endpoint
 * ({@code smr_init_sig_handlers}): at the first such signal they {@code shm_unlink} the region of
 * every shm endpoint of the process, put the previous handler back and call it. The JVM takes SIGSEGV
 * in normal operation (safepoint polls, implicit null checks), so within moments of the first shm
 * endpoint every region this process has opened is unlinked: other processes no longer find its
 * endpoints (a connection request to its PSP is never delivered: {@code fi_send} answers
 * {@code -FI_EAGAIN} forever). The handlers the process had before {@code fi_endpoint} are put back
 * right after it, before the endpoint is enabled (shm creates its region at the enable), so that no
 * region exists while the provider's handler is installed.
 */
public final class FiSignals {
    private FiSignals() {
    }

    private static final Logger LOG = LoggerFactory.getLogger(FiSignals.class);
    /** SIGINT, SIGBUS, SIGSEGV, SIGTERM (Linux). */
    private static final int[] SIGNALS = {2, 7, 11, 15};
    /** {@code sizeof(struct sigaction)} on Linux x86_64 and aarch64 is 152; room to spare. */
    private static final long SIGACTION = 256;
    private static final MethodHandle SIGACTION_CALL;

    static {
        Linker l = Linker.nativeLinker();
        SIGACTION_CALL = l.downcallHandle(l.defaultLookup().find("sigaction").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    }

    /**
     * Runs {@code create} (a {@code fi_endpoint}) and puts back every handler of {@link #SIGNALS} it
     * replaced; the endpoint it returns.
     */
    public static synchronized long keeping(LongSupplier create) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment before = a.allocate(SIGACTION * SIGNALS.length, 8);
            MemorySegment now = a.allocate(SIGACTION, 8);
            for (int i = 0; i < SIGNALS.length; i++) {
                sigaction(SIGNALS[i], MemorySegment.NULL, before.asSlice(i * SIGACTION, SIGACTION));
            }
            long ep = create.getAsLong();
            for (int i = 0; i < SIGNALS.length; i++) {
                MemorySegment old = before.asSlice(i * SIGACTION, SIGACTION);
                now.fill((byte) 0);
                sigaction(SIGNALS[i], MemorySegment.NULL, now);
                if (now.get(ValueLayout.JAVA_LONG, 0) != old.get(ValueLayout.JAVA_LONG, 0)) {
                    sigaction(SIGNALS[i], old, MemorySegment.NULL);
                    LOG.debug("signal {}: the handler the provider installed is replaced by the process's again", SIGNALS[i]);
                }
            }
            return ep;
        }
    }

    private static void sigaction(int sig, MemorySegment act, MemorySegment old) {
        try {
            int rc = (int) SIGACTION_CALL.invokeExact(sig, act, old);
            if (rc != 0) {
                LOG.warn("sigaction({}) failed", sig);
            }
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
