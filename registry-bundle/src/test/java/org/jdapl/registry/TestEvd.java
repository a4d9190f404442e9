package org.jdapl.registry;

import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;

/**
 * An in-memory EVD for the registry's test provider: a bounded queue that blocks waiters. An event
 * queued before the EVD is freed is still handed to a thread already waiting.
 */
final class TestEvd implements EventDispatcher {
    private final InterfaceAdapter ia;
    private final Set<EvdFlag> flags;
    private final ArrayDeque<DatEvent> queue = new ArrayDeque<>();
    private int qlen;
    private boolean freed;
    private boolean enabled = true;
    private boolean waitable = true;
    private int waiters;
    private Object context;

    TestEvd(InterfaceAdapter ia, int qlen, Set<EvdFlag> flags) {
        this.ia = ia;
        this.qlen = qlen;
        this.flags = flags.isEmpty() ? EnumSet.noneOf(EvdFlag.class) : EnumSet.copyOf(flags);
    }

    /** Queues an event from the provider; an overflow drops nothing silently (it fails). */
    synchronized void post(DatEvent event) {
        if (queue.size() >= qlen) {
            throw new DatException(DatReturnType.QUEUE_FULL, "test EVD full");
        }
        queue.add(event);
        notifyAll();
    }

    synchronized int waiters() {
        return waiters;
    }

    synchronized void markFreed() {
        freed = true;
        notifyAll();
    }

    private void check() {
        if (freed) {
            throw HandleType.EVD.invalid("EVD freed");
        }
    }

    @Override
    public synchronized EvdParam query() {
        check();
        return new EvdParam(ia, qlen, enabled, waitable, null, flags);
    }

    @Override
    public synchronized void free() {
        check();
        if (waiters > 0) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_WAITER, "a thread waits");
        }
        markFreed();
    }

    @Override
    public synchronized void resize(int minQlen) {
        check();
        if (minQlen < 1 || minQlen < queue.size()) {
            throw DatException.invalidParameter(2, "bad length " + minQlen);
        }
        qlen = minQlen;
    }

    @Override
    public synchronized void postSoftwareEvent(Object pointer) {
        check();
        if (!flags.contains(EvdFlag.SOFTWARE)) {
            throw DatException.invalidParameter(1, "no software events on this EVD");
        }
        post(new DatEvent.Software(this, pointer));
    }

    @Override
    public synchronized Optional<DatEvent> dequeue() {
        check();
        return Optional.ofNullable(queue.poll());
    }

    @Override
    public synchronized DatEvent waitEvent(long timeoutMicros, int threshold) {
        check();
        if (timeoutMicros < 0 || threshold < 1) {
            throw DatException.invalidParameter(2, "bad timeout or threshold");
        }
        if (!waitable) {
            throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_EVD_UNWAITABLE, "unwaitable");
        }
        long deadline = timeoutMicros >= Dat.TIMEOUT_INFINITE ? Long.MAX_VALUE
                : System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(timeoutMicros);
        waiters++;
        try {
            while (queue.isEmpty()) {
                if (freed) {
                    throw HandleType.EVD.invalid("EVD freed while waiting");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new DatException(DatReturnType.TIMEOUT_EXPIRED, "no event");
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return queue.poll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DatException(DatReturnType.INTERRUPTED_CALL, "interrupted");
        } finally {
            waiters--;
        }
    }

    @Override
    public synchronized int count() {
        check();
        return queue.size();
    }

    @Override
    public synchronized void enable() {
        check();
        enabled = true;
    }

    @Override
    public synchronized void disable() {
        check();
        enabled = false;
    }

    @Override
    public synchronized void setUnwaitable() {
        check();
        waitable = false;
        notifyAll();
    }

    @Override
    public synchronized void clearUnwaitable() {
        check();
        waitable = true;
    }

    @Override
    public void modifyCno(Cno cno) {
        check();
        throw new DatException(DatReturnType.NOT_IMPLEMENTED, "the registry's test EVD has no CNO");
    }

    @Override
    public synchronized HandleType handleType() {
        check();
        return HandleType.EVD;
    }

    @Override
    public synchronized void setConsumerContext(Object context) {
        check();
        this.context = context;
    }

    @Override
    public synchronized Object consumerContext() {
        check();
        return context;
    }

    @Override
    public synchronized boolean isFreed() {
        return freed;
    }
}
