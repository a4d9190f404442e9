package org.jdapl.provider.ofa;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;

/**
 * A CNO: the EVDs attached to it trigger it when an event arrives that nobody waits for on the EVD
 * itself; {@link #waitCno} blocks until then. The wait agent is called on the triggering thread.
 */
final class OfaCno extends OfaHandle implements Cno, IaObjects.Owned {
    private final OfaIa ia;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition triggered = lock.newCondition();
    private volatile Consumer<EventDispatcher> agent;
    private EventDispatcher pending;
    private CompletableFuture<EventDispatcher> next;
    private int waiters;
    /** EVDs attached. Guarded by {@link #lock}. */
    private int attached;

    private OfaCno(OfaIa ia, Consumer<EventDispatcher> agent) {
        super(HandleType.CNO);
        this.ia = ia;
        this.agent = agent;
    }

    /** {@code dat_cno_create} (IA lock held). */
    static OfaCno create(OfaIa ia, Consumer<EventDispatcher> agent) {
        OfaCno c = new OfaCno(ia, agent);
        ia.objects().add(HandleType.CNO, c);
        return c;
    }

    @Override
    public CnoParam query() {
        live();
        return new CnoParam(ia, agent);
    }

    @Override
    public void modifyAgent(Consumer<EventDispatcher> waitAgent) {
        live();
        agent = waitAgent;
    }

    @Override
    public void free() {
        ia.free(this, () -> {
            checkFree();
        });
    }

    /** Removes the CNO from the IA and fails its waiters (IA lock held). */
    @Override
    public void destroy() {
        ia.objects().remove(HandleType.CNO, this);
        closed();
    }

    /** Checks that the CNO can be freed (no EVD attached, nobody waiting). */
    void checkFree() {
        lock.lock();
        try {
            if (attached > 0 || waiters > 0) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_IN_USE,
                        "CNO has " + attached + " EVD(s) attached and " + waiters + " waiter(s)");
            }
        } finally {
            lock.unlock();
        }
    }

    /** Marks the CNO freed and fails waiters and pending stages. */
    void closed() {
        markFreed();
        lock.lock();
        try {
            triggered.signalAll();
            if (next != null) {
                next.completeExceptionally(DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_DEAD,
                        "CNO was freed"));
                next = null;
            }
        } finally {
            lock.unlock();
        }
    }

    void attach() {
        lock.lock();
        try {
            attached++;
        } finally {
            lock.unlock();
        }
    }

    void detach() {
        lock.lock();
        try {
            attached--;
        } finally {
            lock.unlock();
        }
    }

    /** An attached EVD got an event nobody waited for. */
    void trigger(EventDispatcher evd) {
        if (isFreed()) {
            return;
        }
        CompletableFuture<EventDispatcher> stage;
        lock.lock();
        try {
            pending = evd;
            triggered.signalAll();
            stage = next;
            next = null;
        } finally {
            lock.unlock();
        }
        if (stage != null) {
            stage.complete(evd);
        }
        Consumer<EventDispatcher> a = agent;
        if (a != null) {
            a.accept(evd);
        }
    }

    @Override
    public EventDispatcher waitCno(long timeoutMicros) {
        live();
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout " + timeoutMicros);
        }
        lock.lock();
        try {
            long deadline = timeoutMicros >= Dat.TIMEOUT_INFINITE ? Long.MAX_VALUE
                    : System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
            waiters++;
            try {
                while (pending == null) {
                    if (isFreed()) {
                        throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_DEAD, "CNO was freed");
                    }
                    long left = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "CNO not triggered in time");
                    }
                    if (left == Long.MAX_VALUE) {
                        triggered.await();
                    } else {
                        triggered.awaitNanos(left);
                    }
                }
                EventDispatcher e = pending;
                pending = null;
                return e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DatException(DatReturnType.INTERRUPTED_CALL, "CNO wait interrupted");
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Optional<EventDispatcher> trigger() {
        live();
        lock.lock();
        try {
            EventDispatcher e = pending;
            pending = null;
            return Optional.ofNullable(e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CompletionStage<EventDispatcher> nextTrigger() {
        live();
        lock.lock();
        try {
            if (next == null) {
                next = new CompletableFuture<>();
            }
            return next;
        } finally {
            lock.unlock();
        }
    }
}
