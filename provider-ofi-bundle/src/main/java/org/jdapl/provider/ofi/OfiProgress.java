package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IA's progress: reads its EQ (connection events: {@code FI_CONNREQ}, {@code FI_CONNECTED},
 * {@code FI_SHUTDOWN}, errors through {@code fi_eq_readerr}) and hands each entry to the object whose
 * context the entry's fid carries; reads the CQs of the IA's EVDs; fires connect time-outs. One thread
 * per IA does it while nobody else does; a consumer that polls an EVD does the same reads itself (the
 * EQ and the EVD's CQ), so that it never depends on this thread. Idle, the thread blocks in
 * {@link FdWait} on the wait file descriptors of the EQ and the CQs ({@code FI_WAIT_FD}), woken by the
 * provider's sockets or by {@link #later}; where an object has no wait file descriptor it parks for up
 * to 1 ms between looks. The CQ of an EVD that a consumer is polling is left to that consumer: the
 * consumer's dequeues bump the EVD's poll counter without reading a clock, and the thread, looking
 * at the counter with the clock it reads for its loop, takes the EVD as polled while the counter
 * changed within the last millisecond and no wait began since ({@link PollMark#polledRecently}); it then
 * neither reads the CQ nor waits on its descriptor, and looks again every millisecond, so that a
 * polling consumer runs alone on its CQ as an application of libfabric's own does; not while an EP
 * of the IA waits for a receive credit ({@link HeldRequests#holds}).
 */
final class OfiProgress implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(OfiProgress.class);
    private static final int EQ_BUF = 16 + 512;

    private final OfiIa ia;
    private final Thread thread;
    private final ReentrantLock eqLock = new ReentrantLock();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment eqEvent = arena.allocate(8, 8);
    private final MemorySegment eqBuf = arena.allocate(EQ_BUF, 8);
    private final MemorySegment eqErr = arena.allocate(FI_EQ_ERR_ENTRY.size(), 8);
    /** The EQ's {@code fi_eq_read}, resolved once ({@link FiCalls#eqReadFn}). */
    private final MemorySegment eqRead;
    /** The EVDs with a CQ, as an array that is replaced on a change: the loop reads it without allocating. */
    private volatile OfiEvd[] cqEvds = new OfiEvd[0];
    final Map<OfiEp, Long> deadlines = new ConcurrentHashMap<>();
    /**
     * More to read with the EQ: the control endpoints of an RDM IA ({@link RdmIa}), null on a MSG IA.
     * A field, not a list: the loop reads it without an iterator, which a JIT that has seen an RDM IA's
     * reader would leave allocated in every other IA's progress thread.
     */
    private volatile java.util.function.IntSupplier controlReader;
    private final java.util.Queue<Runnable> tasks = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile boolean running = true;
    private final FdWait fdWait = new FdWait();
    /** Held while the thread waits on the objects' file descriptors; an object is closed under it. */
    private final ReentrantLock waitLock = new ReentrantLock();
    private volatile boolean waitSetChanged = true;
    private boolean canBlock;
    /** The EVD of each object in the wait set (null for the EQ), in {@link FdWait}'s order. */
    private OfiEvd[] waitOwners = new OfiEvd[0];

    OfiProgress(OfiIa ia) {
        this.ia = ia;
        this.eqRead = FiCalls.eqReadFn(ia.eq);
        this.thread = Thread.ofPlatform().daemon().name("jdapl-ofi-" + ia.name()).unstarted(this);
    }

    /** Runs {@code task} on the progress thread, with no lock held. */
    void later(Runnable task) {
        tasks.add(task);
        LockSupport.unpark(thread);
        fdWait.wake();
    }

    /** Reads {@code reader} with the EQ from now on: an RDM IA's control endpoints. */
    void readAlso(java.util.function.IntSupplier reader) {
        controlReader = reader;
        waitSetChanged();
    }

    /** The set of CQs changed: the thread rebuilds what it waits on before its next wait. */
    void waitSetChanged() {
        waitSetChanged = true;
        fdWait.wake();
    }

    /**
     * Runs {@code close} (the closing of a CQ taken out of the set) when the thread is not waiting on
     * the objects' file descriptors, so that it never waits on a closed object.
     */
    void closeOutsideWait(Runnable close) {
        waitSetChanged();
        waitLock.lock();
        try {
            close.run();
        } finally {
            waitLock.unlock();
        }
    }

    void start() {
        thread.start();
    }

    void stop() {
        running = false;
        LockSupport.unpark(thread);
        fdWait.wake();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        eqLock.lock();
        try {
            arena.close();
        } finally {
            eqLock.unlock();
        }
    }

    synchronized void addCq(OfiEvd evd) {
        OfiEvd[] a = java.util.Arrays.copyOf(cqEvds, cqEvds.length + 1);
        a[a.length - 1] = evd;
        cqEvds = a;
        waitSetChanged();
    }

    synchronized void removeCq(OfiEvd evd) {
        cqEvds = java.util.Arrays.stream(cqEvds).filter(e -> e != evd).toArray(OfiEvd[]::new);
        waitSetChanged();
    }

    @Override
    public void run() {
        int idle = 0;
        while (running) {
            int n;
            try {
                n = pollEq();
                boolean leave = !ia.held.holds();
                long now = System.nanoTime();
                for (OfiEvd evd : cqEvds) {
                    // the mark first: each loop's look at the counter dates its changes
                    if (!(evd.pollMark.polledRecently(now) && leave)) {
                        n += evd.pollCq();
                    }
                }
                n += ia.held.pump();
                n += timers();
                for (Runnable t; (t = tasks.poll()) != null; n++) {
                    t.run();
                }
            } catch (RuntimeException e) {
                if (!running) {
                    break;
                }
                LOG.warn("progress of {}", ia.name(), e);
                n = 0;
            }
            if (n > 0) {
                idle = 0;
            } else {
                idle = Math.min(idle + 1, 10);
                idle(idle);
            }
        }
    }

    /** Closes the eventfd, after the thread stopped and every object of the IA is closed. */
    void closeWait() {
        fdWait.close();
    }

    /** Waits for something to do: on the file descriptors if every object has one, else parks. */
    private void idle(int idle) {
        waitLock.lock();
        try {
            if (waitSetChanged) {
                waitSetChanged = false;
                rebuildWaitSet();
            }
            if (canBlock && running && tasks.isEmpty()) {
                boolean polled = leaveToConsumers();
                fdWait.await(ia.fabric, deadlines.isEmpty() && !polled ? 100 : 1);
                return;
            }
        } finally {
            waitLock.unlock();
        }
        LockSupport.parkNanos(Math.min(1_000_000L, 1000L << idle));
    }

    /**
     * Takes the CQs of the EVDs that consumers are polling out of the next wait (and puts the others
     * back); whether any was taken out.
     */
    private boolean leaveToConsumers() {
        boolean leave = !ia.held.holds();
        long now = System.nanoTime();
        boolean any = false;
        for (int i = 0; i < waitOwners.length; i++) {
            OfiEvd owner = waitOwners[i];
            boolean polled = owner != null && owner.pollMark.polledRecently(now) && leave;
            fdWait.skip(i, polled);
            any |= polled;
        }
        return any;
    }

    /** An EP of the IA began to wait for a receive credit: the thread reads every CQ until it ends ({@link HeldRequests#holds}). */
    void holdingBegan() {
        fdWait.wake();
    }

    /** A consumer goes to sleep on a CNO: every EVD's CQ is the thread's again at once. */
    void consumersSleep() {
        for (OfiEvd evd : cqEvds) {
            evd.pollMark.consumerSleeps();
        }
        fdWait.wake();
    }

    private void rebuildWaitSet() {
        java.util.List<long[]> objects = new java.util.ArrayList<>();
        java.util.List<OfiEvd> owners = new java.util.ArrayList<>();
        owners.add(null);
        // The control endpoints of an RDM IA (controlReader) have no descriptor in the set: such an IA parks.
        boolean all = ia.eqWaitFd >= 0 && fdWait.usable() && controlReader == null;
        objects.add(new long[] {ia.eq, ia.eqWaitFd});
        for (OfiEvd evd : cqEvds) {
            objects.add(new long[] {evd.cq, evd.waitFd});
            owners.add(evd);
            all &= evd.waitFd >= 0;
            for (EpSrq s : evd.srqCqs()) {
                objects.add(new long[] {s.cq, s.waitFd});
                owners.add(evd);
                all &= s.waitFd >= 0;
            }
        }
        canBlock = all;
        waitOwners = all ? owners.toArray(new OfiEvd[0]) : new OfiEvd[0];
        if (all) {
            fdWait.set(objects.stream().mapToLong(o -> o[0]).toArray(),
                    objects.stream().mapToInt(o -> (int) o[1]).toArray());
        }
    }

    private int timers() {
        if (deadlines.isEmpty()) {
            return 0;
        }
        long now = System.nanoTime();
        int n = 0;
        for (Map.Entry<OfiEp, Long> e : deadlines.entrySet()) {
            if (now - e.getValue() >= 0 && deadlines.remove(e.getKey(), e.getValue())) {
                e.getKey().connectTimedOut();
                n++;
            }
        }
        return n;
    }

    /** Reads what the EQ holds and dispatches it; 0 if another thread is reading it. */
    int pollEq() {
        if (!running || !eqLock.tryLock()) {
            return 0;
        }
        int n = 0;
        try {
            while (running) {
                long rc = FiCalls.eqRead(eqRead, ia.eq, eqEvent.address(), eqBuf.address(), EQ_BUF, 0);
                if (rc == -Fi.FI_EAGAIN) {
                    break;
                }
                n++;
                if (rc == -Fi.FI_EAVAIL) {
                    readError();
                } else if (rc < 0) {
                    LOG.warn("fi_eq_read on {}: {}", ia.name(), Fi.get().strerror((int) -rc));
                    break;
                } else {
                    int event = eqEvent.get(ValueLayout.JAVA_INT, 0);
                    long fid = eqBuf.get(ValueLayout.JAVA_LONG, CM_ENTRY_FID);
                    OfiIa.CmTarget t = target(fid);
                    if (t != null) {
                        t.cmEvent(event, eqBuf.address(), rc);
                    } else {
                        LOG.debug("EQ event {} for an object no longer there", event);
                        if (event == Fi.FI_CONNREQ) {
                            Fi.get().freeinfo(eqBuf.get(ValueLayout.JAVA_LONG, CM_ENTRY_INFO));
                        }
                    }
                }
            }
            java.util.function.IntSupplier control = controlReader;
            if (control != null) {
                n += control.getAsInt();
            }
        } finally {
            eqLock.unlock();
        }
        return n;
    }

    private OfiIa.CmTarget target(long fid) {
        return fid == 0 ? null : ia.cmTargets.get(FiCalls.word(fid + FID_CONTEXT));
    }

    private void readError() {
        eqErr.fill((byte) 0);
        long rc = FiCalls.eqReaderr(ia.eq, eqErr.address(), 0);
        if (rc < 0) {
            return;
        }
        int err = eqErr.get(ValueLayout.JAVA_INT, EQ_ERR_ERR);
        long data = eqErr.get(ValueLayout.JAVA_LONG, EQ_ERR_ERR_DATA);
        long size = eqErr.get(ValueLayout.JAVA_LONG, EQ_ERR_ERR_DATA_SIZE);
        byte[] bytes = new byte[(int) Math.min(Math.max(size, 0), 4096)];
        if (data != 0 && bytes.length > 0) {
            MemorySegment.copy(FiCalls.MEM, ValueLayout.JAVA_BYTE, data, bytes, 0, bytes.length);
        }
        OfiIa.CmTarget t = target(eqErr.get(ValueLayout.JAVA_LONG, EQ_ERR_FID));
        LOG.debug("EQ error {} ({}), {} bytes of data", err, Fi.get().strerror(err), bytes.length);
        if (t != null) {
            t.cmError(err, bytes);
        }
    }
}
