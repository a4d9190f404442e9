package org.jdapl.provider.emu;

import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock that orders the state changes and data movement of a group of IAs: one IA to start with,
 * and every IA it reaches over the loopback fabric once it connects to it ({@link #merge}). Two EP
 * pairs on disjoint IAs therefore never share a lock; objects that interact (an EP and its peer, a
 * connection request and its listener) always hold the same one.
 *
 * <p>The domains are a union-find forest: each IA's domain points at the domain that stands for it
 * ({@code parent}) or is a root, and the root's lock is the group's. Merging points the root of the
 * smaller group at the root of the larger (union by size), and every lookup re-points the domain it
 * starts from at the root it found (path compression), so that finding the lock takes a step or two
 * however many IAs were ever merged, and the domain of an IA that has gone is kept by nobody: a
 * server that served thousands of client IAs finds its lock as fast as after the first, and keeps at
 * most one of their domains (the root, if a client's domain was chosen as root). A thread that
 * acquired a root's lock while that root was merged retries on the new root. Merges happen with no
 * domain lock held by the merging thread and are serialised among themselves, so no thread ever waits
 * for a second domain lock while holding one.
 *
 * <h2>Lock order</h2>
 *
 * The provider's locks are taken in this order only, each held lock allowing those after it:
 * <ol>
 * <li>a tcp IA's poller lock ({@code TcpPoller}), held by the thread that selects its sockets;</li>
 * <li>the domain lock (this class), reentrant;</li>
 * <li>an EP's {@link SendLock} (reentrant; several only under the domain lock, closing a link);</li>
 * <li>a receive ring's producer claim ({@link RecvRing#lockProducer});</li>
 * <li>an EVD's queue lock ({@link org.jdapl.provider.emu.evd.EventQueue});</li>
 * <li>a CNO's lock ({@link EmuCno});</li>
 * <li>leaves, under which nothing is taken: an event ring's producer claim ({@link org.jdapl.provider.emu.evd.EventRing}), the
 *     IA's thread lock ({@link IaThreads}), the loopback fabric's address table.</li>
 * </ol>
 * A thread that holds a send lock without the domain lock (the loopback send that moves without it,
 * {@link org.jdapl.provider.emu.loopback.LoopbackLink#trySend}) therefore never takes the domain lock, nor calls anything that may:
 * it copies, takes the peer's receive and queues both completions, and the report of an EVD that went
 * over its length reads the length without a lock ({@link EmuIa#overflowed}). Everything that needs
 * the domain lock and a send lock (request queue changes, the link's engine, disconnects, flushes,
 * RDMA, queued sends) takes the domain lock first. With assertions enabled (the tests), {@link #acquire}
 * fails a thread that asks for a domain lock it does not hold while it holds a send lock.
 */
public final class LockDomain {
    private static final Object MERGES = new Object();

    private final ReentrantLock lock = new ReentrantLock();
    /** The domain that stands for this one nearer the root, or null for a root. */
    private volatile LockDomain parent;
    /** IAs merged under this root (guarded by {@link #MERGES}; meaningful while a root). */
    private int size = 1;

    /**
     * The domain that now stands for this one (the root); this domain is re-pointed at it. Only the
     * domain asked is re-pointed (each IA asks through its own), and only ever at one of its ancestors,
     * so the forest keeps no cycle whatever lookups and merges race.
     */
    LockDomain current() {
        LockDomain p = parent;
        if (p == null) {
            return this;
        }
        LockDomain root = p;
        LockDomain next;
        while ((next = root.parent) != null) {
            root = next;
        }
        if (root != p) {
            parent = root;
        }
        return root;
    }

    /**
     * Locks the current domain and returns its lock, which the caller unlocks.
     */
    ReentrantLock acquire() {
        assert !SendLock.anyHeldByCurrentThread() || isHeldByCurrentThread()
                : "a domain lock asked for under a send lock (lock order: domain lock first)";
        while (true) {
            LockDomain d = current();
            lockSpinning(d.lock);
            if (d.parent == null) {
                return d.lock;
            }
            d.lock.unlock();
        }
    }

    /** Tries to take a lock held by another thread this many times, spinning, before yielding. */
    private static final int SPINS = 128;
    /** Tries to take it this many times more, yielding the CPU between (its holder may be off one). */
    private static final int YIELDS = 32;
    /** Past the yields, the longest a thread parks between two tries (it starts at a tenth of it). */
    private static final long MAX_PARK_NANOS = 50_000;

    /**
     * Locks {@code lock} without ever queueing on it: its holder keeps it for microseconds, and a
     * {@link ReentrantLock} that queues a thread allocates a node for it, which the data path, whose
     * steady state allocates nothing, would pay whenever two threads meet at the lock on a loaded
     * machine. The thread tries while spinning, then while yielding the CPU, then parks for short and
     * growing intervals (at most {@value #MAX_PARK_NANOS} ns) between tries until it has the lock,
     * as {@link SendLock} does: it waits as long as {@link ReentrantLock#lock} would, plus at most
     * one interval, and, like it, ignores interrupts.
     */
    public static void lockSpinning(ReentrantLock lock) {
        for (int i = 0; i < SPINS + YIELDS; i++) {
            if (lock.tryLock()) {
                return;
            }
            if (i < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        long park = MAX_PARK_NANOS / 10;
        while (!lock.tryLock()) {
            LockSupport.parkNanos(park);
            park = Math.min(MAX_PARK_NANOS, park * 2);
        }
    }

    /** The lock of a domain that is never merged (a tcp IA's), for its own I/O thread. */
    public ReentrantLock unmergedLock() {
        return lock;
    }

    public boolean isHeldByCurrentThread() {
        return current().lock.isHeldByCurrentThread();
    }

    /** Whether {@code other} shares this domain's lock now. */
    public boolean sameAs(LockDomain other) {
        return current() == other.current();
    }

    /**
     * Joins the domains of {@code a} and {@code b} (no domain lock may be held by the caller): the root
     * of the smaller group is pointed at the root of the larger ({@code b}'s on a tie, the IA connected
     * to). Both locks are taken while the absorbed root is redirected, so no thread is inside either
     * domain then.
     */
    public static void merge(LockDomain a, LockDomain b) {
        synchronized (MERGES) {
            LockDomain x = b.current();
            LockDomain y = a.current();
            if (x == y) {
                return;
            }
            if (y.size > x.size) {
                LockDomain t = x;
                x = y;
                y = t;
            }
            x.lock.lock();
            try {
                y.lock.lock();
                try {
                    y.parent = x;
                    x.size += y.size;
                } finally {
                    y.lock.unlock();
                }
            } finally {
                x.lock.unlock();
            }
        }
    }
}
