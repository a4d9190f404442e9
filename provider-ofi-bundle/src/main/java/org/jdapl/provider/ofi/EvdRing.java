package org.jdapl.provider.ofi;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventSlot;

/**
 * The queue of an EVD's events, oldest first: a DTO completion is kept field by field (EP, cookie,
 * status, length, operation) in parallel arrays, so that queuing one and taking it into a caller's
 * {@link EventSlot} allocate nothing; any other event is kept as its object. The ring grows (doubling)
 * when an EVD is resized past it. The caller holds the EVD's lock.
 */
final class EvdRing {
    private DatEvent[] events;
    private OfiEp[] eps;
    private long[] cookies;
    private DtoStatus[] statuses;
    private long[] lengths;
    private DtoOperation[] ops;
    private int head;
    private int size;

    EvdRing(int capacity) {
        allocate(Math.max(capacity, 4));
    }

    private void allocate(int n) {
        events = new DatEvent[n];
        eps = new OfiEp[n];
        cookies = new long[n];
        statuses = new DtoStatus[n];
        lengths = new long[n];
        ops = new DtoOperation[n];
    }

    int size() {
        return size;
    }

    private int tail() {
        if (size == events.length) {
            grow();
        }
        return (head + size) % events.length;
    }

    private void grow() {
        DatEvent[] e = events;
        OfiEp[] p = eps;
        long[] c = cookies;
        DtoStatus[] s = statuses;
        long[] l = lengths;
        DtoOperation[] o = ops;
        int n = e.length;
        allocate(n * 2);
        for (int i = 0; i < size; i++) {
            int from = (head + i) % n;
            events[i] = e[from];
            eps[i] = p[from];
            cookies[i] = c[from];
            statuses[i] = s[from];
            lengths[i] = l[from];
            ops[i] = o[from];
        }
        head = 0;
    }

    /** Queues an event object. */
    void add(DatEvent e) {
        int t = tail();
        events[t] = e;
        eps[t] = null;
        size++;
    }

    /** Queues a DTO completion by its fields. */
    void addDto(OfiEp ep, long cookie, DtoStatus status, long length, DtoOperation op) {
        int t = tail();
        events[t] = null;
        eps[t] = ep;
        cookies[t] = cookie;
        statuses[t] = status;
        lengths[t] = length;
        ops[t] = op;
        size++;
    }

    /** Takes the oldest event as an object (a DTO completion is built here); null if none. */
    DatEvent poll(EventDispatcher evd) {
        if (size == 0) {
            return null;
        }
        int h = head;
        DatEvent e = events[h];
        if (e == null) {
            e = new DatEvent.DtoCompletion(evd, eps[h], cookies[h], statuses[h], lengths[h], ops[h], 0);
        }
        drop(h);
        return e;
    }

    /** Takes the oldest event into {@code slot}; false if none. */
    boolean poll(EventDispatcher evd, EventSlot slot) {
        if (size == 0) {
            return false;
        }
        int h = head;
        DatEvent e = events[h];
        if (e == null) {
            slot.setDtoCompletion(evd, eps[h], cookies[h], statuses[h], lengths[h], ops[h], 0);
        } else {
            slot.set(e);
        }
        drop(h);
        return true;
    }

    private void drop(int h) {
        events[h] = null;
        eps[h] = null;
        statuses[h] = null;
        ops[h] = null;
        head = (h + 1) % events.length;
        size--;
    }

    void clear() {
        while (size > 0) {
            drop(head);
        }
    }
}
