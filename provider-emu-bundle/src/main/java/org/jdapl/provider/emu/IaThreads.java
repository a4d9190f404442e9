package org.jdapl.provider.emu;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two threads of an emulated IA, each started when first needed and stopped when the IA closes:
 * a timer thread (connection timeouts, RNR retries, deferred connection outcomes; its tasks run under
 * the IA's domain lock) and an agent thread (CNO wait agents and stages: consumer code, never under a
 * lock). Data never waits for either: it moves in the thread that posts it.
 */
final class IaThreads {
    private static final Logger LOG = LoggerFactory.getLogger(IaThreads.class);

    private final EmuIa ia;
    // guarded by threadLock
    private final Object threadLock = new Object();
    private ScheduledThreadPoolExecutor timer;
    private ExecutorService agents;
    private volatile Thread timerThread;
    private volatile Thread agentThread;

    IaThreads(EmuIa ia) {
        this.ia = ia;
    }

    /** Runs {@code task} under the fabric lock after {@code delayNanos}, unless the IA is closed first. */
    ScheduledFuture<?> schedule(long delayNanos, Runnable task) {
        synchronized (threadLock) {
            if (ia.isFreed()) {
                return null;
            }
            if (timer == null) {
                timer = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = Thread.ofPlatform().daemon().name("jdapl-emu-" + ia.name() + "-timer").unstarted(r);
                    timerThread = t;
                    return t;
                });
                timer.setRemoveOnCancelPolicy(true);
            }
            return timer.schedule(() -> ia.locked(() -> {
                if (!ia.isFreed()) {
                    try {
                        task.run();
                    } catch (RuntimeException e) {
                        LOG.error("timer task of IA {} failed", ia.name(), e);
                    }
                }
            }), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        }
    }

    /** Runs consumer code (a CNO wait agent or stage) on the agent thread, never under a lock. */
    void runAgent(Runnable task) {
        synchronized (threadLock) {
            if (ia.isFreed()) {
                return;
            }
            if (agents == null) {
                agents = Executors.newSingleThreadExecutor(r -> {
                    Thread t = Thread.ofPlatform().daemon().name("jdapl-emu-" + ia.name() + "-agent").unstarted(r);
                    agentThread = t;
                    return t;
                });
            }
            agents.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.warn("a CNO wait agent of IA {} failed", ia.name(), e);
                }
            });
        }
    }

    /** Stops both threads and waits for them to end (unless called on one of them). */
    void stop() {
        ScheduledThreadPoolExecutor t;
        ExecutorService a;
        synchronized (threadLock) {
            t = timer;
            a = agents;
            timer = null;
            agents = null;
        }
        if (t != null) {
            t.shutdownNow();
            awaitUnless(t, timerThread);
        }
        if (a != null) {
            a.shutdown();
            awaitUnless(a, agentThread);
        }
    }

    /** Waits until the executor's thread has ended, unless the caller is that thread. */
    private void awaitUnless(ExecutorService executor, Thread worker) {
        if (Thread.currentThread() == worker) {
            return;
        }
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS) || (worker != null && !worker.join(
                    java.time.Duration.ofSeconds(5)))) {
                LOG.warn("a thread of IA {} did not stop within 5 s", ia.name());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
