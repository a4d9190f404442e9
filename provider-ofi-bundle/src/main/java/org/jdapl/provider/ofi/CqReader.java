package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;

/**
 * A libfabric CQ ({@code FI_CQ_FORMAT_DATA}, opened with {@code FI_WAIT_FD} where the provider has
 * it, {@link FdWait}) and its reader: completions are read in batches into native memory allocated
 * once, under the CQ's lock, and each is handed to a {@link Sink} by its operation context, its
 * errno (0: success; an error entry without one is taken as {@code FI_ETRUNC}; on libfabric's verbs
 * provider the work completion's status, {@link FiErrors#verbsError}) and its length, or, for a
 * receive with remote CQ data ({@code FI_REMOTE_CQ_DATA}), by its context and that data (an RDMA
 * Write with immediate data's message, {@link OfiExtensions}). An EVD reads its
 * CQ through one ({@link OfiEvd}), and so does an EP on an SRQ for its receive CQ ({@link EpSrq}).
 */
final class CqReader {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CqReader.class);
    private static final int BATCH = 16;
    /** The errno of an error entry that gives none: {@code FI_ETRUNC} (a receive too small gives none on tcp). */
    private static final int UNKNOWN_ERROR = 265;

    /** Where completions go. */
    interface Sink {
        void completed(long context, int err, long len);

        /**
         * A successful receive that carried remote CQ data ({@code FI_REMOTE_CQ_DATA}): an RDMA Write
         * with immediate data consumed it ({@link OfiExtensions}); by default a plain completion of
         * the length the data carries.
         */
        default void completedWithData(long context, long data) {
            completed(context, 0, data >>> 32);
        }

    }

    final long cq;
    /** The CQ's wait file descriptor ({@code FI_WAIT_FD}), -1 without one. */
    final int waitFd;
    private final ReentrantLock lock = new ReentrantLock();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buf;
    private final MemorySegment errBuf;
    private boolean closed;
    /** The CQ's {@code fi_cq_read}, resolved once ({@link FiCalls#cqReadFn}). */
    private final MemorySegment readFn;
    /** The IA's provider is libfabric's verbs: an RDMA Write's immediate data carries 32 bits ({@link #readLocked}). */
    private final boolean verbs;
    /** The IA's provider is verbs or rxm over verbs: an error entry's {@code prov_errno} is the work completion's status. */
    private final boolean verbsCore;

    /** Opens a CQ of {@code size} entries on the IA's domain. */
    CqReader(OfiIa ia, int size) {
        String provider = org.jdapl.provider.ofi.fabric.FiInfo.providerName(ia.info);
        verbs = "verbs".equals(provider);
        verbsCore = verbs || provider != null && provider.startsWith("verbs;");
        try {
            MemorySegment attr = arena.allocate(FI_CQ_ATTR.size(), 8);
            attr.set(ValueLayout.JAVA_LONG, CQ_ATTR_SIZE, size);
            attr.set(ValueLayout.JAVA_INT, CQ_ATTR_FORMAT, Fi.FI_CQ_FORMAT_DATA);
            long[] opened = FdWait.cqOpen(ia.domain, attr);
            cq = opened[0];
            waitFd = (int) opened[1];
        } catch (FiException e) {
            arena.close();
            throw FiErrors.toDat(e);
        }
        readFn = FiCalls.cqReadFn(cq);
        buf = arena.allocate(FI_CQ_DATA_ENTRY.size() * BATCH, 8);
        errBuf = arena.allocate(FI_CQ_ERR_ENTRY.size(), 8);
    }

    /**
     * Reads up to a batch of completions into {@code sink}; the number read. Another thread reading
     * meanwhile (or a closed CQ) reads nothing.
     */
    int read(Sink sink) {
        if (lock.hasQueuedThreads() || !lock.tryLock()) { // a thread waiting to bind, enable or close goes first
            return 0;
        }
        try {
            return closed ? 0 : readLocked(sink);
        } finally {
            lock.unlock();
        }
    }

    private int readLocked(Sink sink) {
        long n = FiCalls.cqRead(readFn, cq, buf.address(), BATCH);
        if (n > 0) {
            long base = buf.address();
            for (int i = 0; i < n; i++) {
                long e = base + i * FI_CQ_DATA_ENTRY.size();
                if ((FiCalls.word(e + CQE_FLAGS) & Fi.FI_REMOTE_CQ_DATA) != 0) {
                    long data = FiCalls.word(e + CQE_DATA);
                    if (verbs) {
                        // An RDMA Write with immediate data of the verbs provider: 32 bits of data, the write's length.
                        data = FiCalls.word(e + CQE_LEN) << 32 | (data & 0xffff_ffffL);
                        sink.completedWithData(FiCalls.word(e + CQE_OP_CONTEXT), data);
                    } else {
                        sink.completedWithData(FiCalls.word(e + CQE_OP_CONTEXT), data);
                    }
                } else {
                    sink.completed(FiCalls.word(e + CQE_OP_CONTEXT), 0, FiCalls.word(e + CQE_LEN));
                }
            }
            return (int) n;
        }
        if (n == -Fi.FI_EAVAIL) {
            errBuf.fill((byte) 0);
            if (FiCalls.cqReaderr(cq, errBuf.address(), 0) > 0) {
                int err = errBuf.get(ValueLayout.JAVA_INT, CQ_ERR_ERR);
                if (verbsCore) {
                    // rxm passes its core CQ's error entry on: an RDMA Write to a bad key is IBV_WC_REM_ACCESS_ERR
                    err = FiErrors.verbsError(err, errBuf.get(ValueLayout.JAVA_INT, CQ_ERR_PROV_ERRNO));
                }
                sink.completed(errBuf.get(ValueLayout.JAVA_LONG, CQ_ERR_OP_CONTEXT), err == 0 ? UNKNOWN_ERROR : err,
                        errBuf.get(ValueLayout.JAVA_LONG, CQ_ERR_LEN));
                return 1;
            }
        }
        return 0;
    }

    /** Takes the CQ's lock (reentrant: a {@link #read} of the same thread then reads). */
    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    /**
     * Runs {@code r} with the CQ's lock held, so that no thread reads the CQ meanwhile: an endpoint is
     * bound to the CQ and enabled in {@code r} (shm's CQ read progresses every bound endpoint, and one
     * not enabled yet has no receive context), or closed in {@code r} (no read is inside the provider
     * meanwhile). The wait for the lock is bounded (1 s): a caller holding an EP's lock may meet a
     * reader that waits for that EP's lock; then {@code r} runs without the CQ's lock.
     */
    void withLocked(Runnable r) {
        boolean locked = false;
        boolean interrupted = false;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (!locked && System.nanoTime() - end < 0) {
            try {
                locked = lock.tryLock(end - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                // An interrupt (a kit case past its time) does not shorten the wait: r must not run
                // beside a read of the CQ.
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (!locked) {
            LOG.warn("the CQ's lock was not free within 1 s: an endpoint is bound, enabled or closed while the CQ may be read");
            r.run();
            return;
        }
        try {
            r.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the CQ (outside the progress thread's wait); what it still holds goes to {@code leftover}
     * first (null: dropped). Once only.
     */
    void close(OfiIa ia, Sink leftover) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (leftover != null) {
                int guard = 0;
                while (readLocked(leftover) > 0 && guard++ < 1_000_000) {
                    // more
                }
            }
            closed = true;
            ia.progress.closeOutsideWait(() -> OfiIa.closeQuietly(cq));
            arena.close();
        } finally {
            lock.unlock();
        }
    }
}
