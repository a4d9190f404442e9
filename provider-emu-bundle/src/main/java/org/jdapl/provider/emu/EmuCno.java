package org.jdapl.provider.emu;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jdapl.provider.emu.evd.ReleasedWait;

import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;

/**
 * An emulated Consumer Notification Object. An attached EVD triggers it; a trigger goes to a thread
 * in {@link #waitCno}, else to the stages of {@link #nextTrigger}, else it stays pending for the next
 * wait or {@link #trigger()}. The wait agent is called for every trigger on the IA's agent thread.
 */
public final class EmuCno extends EmuObject implements Cno {
    private final EmuIa ia;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition triggered = lock.newCondition();
    private final LinkedHashSet<EventDispatcher> pending = new LinkedHashSet<>();
    private final List<CompletableFuture<EventDispatcher>> stages = new ArrayList<>();
    private volatile Consumer<EventDispatcher> agent;
    /** Threads in {@link #waitCno} (written under the lock). */
    private volatile int waiters;
    // guarded by the fabric lock
    private int attached;

    EmuCno(EmuIa ia, Consumer<EventDispatcher> agent) {
        super(HandleType.CNO);
        this.ia = ia;
        this.agent = agent;
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    void attach() {
        attached++;
    }

    void detach() {
        attached--;
    }

    /** Called by an attached EVD when a notification event arrives and nobody waits on the EVD. */
    void trigger(EmuEvd evd) {
        if (isFreed()) {
            return;
        }
        List<CompletableFuture<EventDispatcher>> ready = List.of();
        lock.lock();
        try {
            if (waiters == 0 && !stages.isEmpty()) {
                ready = new ArrayList<>(stages);
                stages.clear();
            } else {
                pending.add(evd);
                triggered.signal();
            }
        } finally {
            lock.unlock();
        }
        Consumer<EventDispatcher> a = agent;
        if (a != null) {
            ia.runAgent(() -> a.accept(evd));
        }
        if (!ready.isEmpty()) {
            List<CompletableFuture<EventDispatcher>> toComplete = ready;
            ia.runAgent(() -> toComplete.forEach(f -> f.complete(evd)));
        }
    }

    @Override
    public CnoParam query() {
        checkLive();
        return new CnoParam(ia, agent);
    }

    @Override
    public void modifyAgent(Consumer<EventDispatcher> waitAgent) {
        checkLive();
        agent = waitAgent;
    }

    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            lock.lock();
            try {
                if (attached > 0 || waiters > 0) {
                    throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_IN_USE,
                            "the CNO has " + attached + " attached EVD(s) and " + waiters + " waiter(s)");
                }
            } finally {
                lock.unlock();
            }
            destroy();
            ia.forget(this);
        });
    }

    /** Whether a thread is in {@link #waitCno}. */
    boolean hasWaiters() {
        return waiters > 0;
    }

    /** Frees the CNO whatever uses it: waiters and stages fail. */
    void destroy() {
        markFreed();
        List<CompletableFuture<EventDispatcher>> failed;
        lock.lock();
        try {
            triggered.signalAll();
            failed = new ArrayList<>(stages);
            stages.clear();
            pending.clear();
        } finally {
            lock.unlock();
        }
        failed.forEach(f -> f.completeExceptionally(invalidHandle()));
    }

    @Override
    public EventDispatcher waitCno(long timeoutMicros) {
        checkLive();
        if (timeoutMicros < 0) {
            throw DatException.invalidParameter(2, "negative timeout " + timeoutMicros);
        }
        boolean infinite = timeoutMicros >= Dat.TIMEOUT_INFINITE;
        long remaining = infinite ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
        lock.lock();
        try {
            waiters++;
            try {
                while (true) {
                    EventDispatcher evd = takePending();
                    if (evd != null) {
                        return evd;
                    }
                    if (isFreed()) {
                        throw ReleasedWait.cnoFreed();
                    }
                    if (!infinite && remaining <= 0) {
                        throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no trigger within " + timeoutMicros
                                + " us");
                    }
                    if (infinite) {
                        triggered.await();
                    } else {
                        remaining = triggered.awaitNanos(remaining);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DatException(DatReturnType.INTERRUPTED_CALL, DatReturnSubtype.SUB_INTERRUPTED,
                        "interrupted while waiting on the CNO", e);
            } finally {
                waiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    private EventDispatcher takePending() {
        Iterator<EventDispatcher> it = pending.iterator();
        if (!it.hasNext()) {
            return null;
        }
        EventDispatcher evd = it.next();
        it.remove();
        return evd;
    }

    @Override
    public Optional<EventDispatcher> trigger() {
        checkLive();
        lock.lock();
        try {
            return Optional.ofNullable(takePending());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CompletionStage<EventDispatcher> nextTrigger() {
        checkLive();
        lock.lock();
        try {
            EventDispatcher evd = takePending();
            if (evd != null) {
                return CompletableFuture.completedFuture(evd);
            }
            CompletableFuture<EventDispatcher> f = new CompletableFuture<>();
            stages.add(f);
            return f;
        } finally {
            lock.unlock();
        }
    }
}
