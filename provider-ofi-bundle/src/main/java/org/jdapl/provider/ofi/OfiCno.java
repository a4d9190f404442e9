package org.jdapl.provider.ofi;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jdapl.dat.Cno;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.HandleType;

/**
 * A CNO: an EVD with this CNO triggers it when it queues an event while enabled and nobody waits on
 * the EVD. The trigger wakes a {@link #waitCno} waiter, completes {@link #nextTrigger} and calls the
 * wait agent on a thread of its own.
 */
final class OfiCno extends OfiObject implements Cno {
    private volatile Consumer<EventDispatcher> agent;
    private EventDispatcher triggered;
    private CompletableFuture<EventDispatcher> next = new CompletableFuture<>();
    final AtomicInteger users = new AtomicInteger();

    OfiCno(OfiIa ia, Consumer<EventDispatcher> agent) {
        super(ia, HandleType.CNO);
        this.agent = agent;
        ia.added(this);
    }

    static OfiCno of(OfiIa ia, Cno cno) {
        if (!(cno instanceof OfiCno c) || c.ia != ia || c.freed) {
            throw DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_CNO, "not a live CNO of this IA");
        }
        return c;
    }

    void trigger(OfiEvd evd) {
        CompletableFuture<EventDispatcher> f;
        synchronized (this) {
            if (freed) {
                return;
            }
            triggered = evd;
            f = next;
            next = new CompletableFuture<>();
            notifyAll();
        }
        f.complete(evd);
        Consumer<EventDispatcher> a = agent;
        if (a != null) {
            Thread.ofVirtual().name("jdapl-ofi-cno").start(() -> a.accept(evd));
        }
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
        live();
        if (users.get() > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_IN_USE, "an EVD uses the CNO");
        }
        destroy();
        ia.removed(this);
    }

    @Override
    synchronized void destroy() {
        freed = true;
        notifyAll();
    }

    @Override
    public synchronized EventDispatcher waitCno(long timeoutMicros) {
        ia.progress.consumersSleep();
        live();
        long deadline = timeoutMicros >= Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : System.nanoTime() + timeoutMicros * 1000;
        try {
            while (triggered == null) {
                if (freed) {
                    throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_CNO_DEAD, "the CNO was freed");
                }
                long left = deadline == Long.MAX_VALUE ? 1_000_000_000L : deadline - System.nanoTime();
                if (left <= 0) {
                    throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no trigger within " + timeoutMicros + " us");
                }
                wait(left / 1_000_000, (int) (left % 1_000_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DatException(DatReturnType.INTERRUPTED_CALL, "interrupted");
        }
        EventDispatcher e = triggered;
        triggered = null;
        return e;
    }

    @Override
    public synchronized Optional<EventDispatcher> trigger() {
        live();
        EventDispatcher e = triggered;
        triggered = null;
        return Optional.ofNullable(e);
    }

    @Override
    public synchronized CompletionStage<EventDispatcher> nextTrigger() {
        live();
        return next;
    }
}
