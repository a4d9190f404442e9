package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.jdapl.provider.ofa.verbs.Libc;
import org.jdapl.provider.ofa.verbs.Structs.PollFd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one event thread of an IA. It blocks in {@code poll(2)} on the IA's completion channel, the
 * device's asynchronous event descriptor, the rdma_cm event channel and an eventfd that wakes it for
 * shutdown, and hands whatever is ready to the IA. It never spins: every descriptor is drained
 * non-blocking and the thread goes back to poll.
 */
final class OfaEventLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(OfaEventLoop.class);

    /** What the loop calls when a descriptor is ready. */
    interface Handler {
        /** The completion channel has events. */
        void completions();

        /** The device has asynchronous events. */
        void asyncEvents();

        /** The rdma_cm channel has events. */
        void cmEvents();

        /**
         * How long a polling consumer still takes the rdma_cm events itself, in nanoseconds ({@link
         * CmProgress}); while it is positive the loop leaves the rdma_cm channel out of its poll.
         */
        default long cmLeaseNanos() {
            return 0;
        }
    }

    private final String name;
    private final int wakeFd;
    private final int compFd;
    private final int asyncFd;
    private final int cmFd;
    private final Handler handler;
    private final Thread thread;
    private volatile boolean stopping;
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private final AtomicLong timerSeq = new AtomicLong();

    /** A task the loop runs at a deadline unless it is cancelled first. */
    static final class Timer implements Comparable<Timer> {
        private final long deadline;
        private final long seq;
        private final Runnable task;
        private final PriorityQueue<Timer> queue;
        private volatile boolean cancelled;

        private Timer(long deadline, long seq, Runnable task, PriorityQueue<Timer> queue) {
            this.deadline = deadline;
            this.seq = seq;
            this.task = task;
            this.queue = queue;
        }

        /**
         * Cancels the task; it does not run if it has not started. It leaves the loop's queue at once,
         * so that the task, and the EP it names, are not held until the deadline (a connect's
         * time-out, cancelled when the connection is established, may be minutes away).
         */
        void cancel() {
            cancelled = true;
            synchronized (queue) {
                queue.remove(this);
            }
        }

        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(deadline, o.deadline);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    /**
     * Runs {@code task} on the event thread after {@code delayNanos} (0: as soon as possible). The
     * thread is woken only if the task is now the first due: otherwise its poll already ends by an
     * earlier deadline (a connect's time-out does not wake it on every {@code dat_ep_connect}).
     */
    Timer schedule(long delayNanos, Runnable task) {
        Timer t = new Timer(System.nanoTime() + Math.max(0, delayNanos), timerSeq.incrementAndGet(), task, timers);
        boolean first;
        synchronized (timers) {
            timers.add(t);
            first = timers.peek() == t;
        }
        if (first && Thread.currentThread() != thread) {
            Libc.signal(wakeFd);
        }
        return t;
    }

    /** Runs the timers that are due; returns the poll timeout until the next one (-1: none). */
    private int runTimers() {
        while (true) {
            Timer t;
            synchronized (timers) {
                t = timers.peek();
                if (t == null) {
                    return -1;
                }
                long left = t.deadline - System.nanoTime();
                if (left > 0) {
                    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000));
                }
                timers.poll();
            }
            if (!t.cancelled) {
                try {
                    t.task.run();
                } catch (RuntimeException e) {
                    LOG.warn("IA {}: timer task failed", name, e);
                }
            }
        }
    }

    /** The timers not yet run or cancelled. */
    int pendingTimers() {
        synchronized (timers) {
            return timers.size();
        }
    }

    OfaEventLoop(String name, int compFd, int asyncFd, int cmFd, Handler handler) {
        this.name = name;
        this.wakeFd = Libc.eventfd();
        this.compFd = compFd;
        this.asyncFd = asyncFd;
        this.cmFd = cmFd;
        this.handler = handler;
        this.thread = Thread.ofPlatform().daemon().name("jdapl-ofa-events-" + name).unstarted(this);
    }

    void start() {
        thread.start();
    }

    @Override
    public void run() {
        int[] fds = {wakeFd, compFd, asyncFd, cmFd};
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfds = a.allocate(PollFd.S.size() * fds.length, 8);
            MemorySegment[] slots = new MemorySegment[fds.length];
            for (int i = 0; i < fds.length; i++) {
                slots[i] = pfds.asSlice(i * PollFd.S.size(), PollFd.S.size());
                PollFd.FD.setInt(slots[i], fds[i]);
                PollFd.EVENTS.setU16(slots[i], Libc.POLLIN);
            }
            while (!stopping) {
                int timeout = runTimers();
                if (stopping) {
                    break;
                }
                // While a polling consumer takes the rdma_cm events, an arriving one wakes nobody; the
                // loop looks again when the consumer's lease would end.
                long lease = handler.cmLeaseNanos();
                PollFd.FD.setInt(slots[3], lease > 0 ? -1 : fds[3]);
                if (lease > 0) {
                    int leaseMillis = (int) Math.min(Integer.MAX_VALUE, (lease + 999_999) / 1_000_000);
                    timeout = timeout < 0 ? leaseMillis : Math.min(timeout, leaseMillis);
                }
                Libc.poll(pfds, fds.length, timeout);
                for (int i = 0; i < fds.length && !stopping; i++) {
                    MemorySegment p = slots[i];
                    int revents = PollFd.REVENTS.getU16(p);
                    if (revents == 0 || fds[i] < 0) {
                        continue;
                    }
                    PollFd.REVENTS.setU16(p, 0);
                    try {
                        switch (i) {
                            case 0 -> Libc.drain(wakeFd);
                            case 1 -> handler.completions();
                            case 2 -> handler.asyncEvents();
                            default -> handler.cmEvents();
                        }
                    } catch (RuntimeException e) {
                        LOG.warn("IA {}: event handling failed", name, e);
                    }
                    if ((revents & Libc.POLLERRS) != 0 && i > 0) {
                        LOG.warn("IA {}: descriptor {} reports an error (revents 0x{}); no longer watched", name,
                                fds[i], Integer.toHexString(revents));
                        PollFd.FD.setInt(p, -1);
                        fds[i] = -1;
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.error("IA {}: event thread stopped", name, e);
        }
    }

    /** Stops the thread and waits for it (up to 10 s), then closes the wake descriptor. */
    void stop() {
        stopping = true;
        Libc.signal(wakeFd);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.error("IA {}: event thread did not stop within 10 s", name);
                return;
            }
        }
        Libc.close(wakeFd);
    }
}
