package org.jdapl.tools.soak;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jdapl.dat.DtoStatus;

/**
 * The soak run's accounts: every DTO the run posts gets a cookie of its own, entered here before the
 * post and settled by its completion. A completion whose cookie is not outstanding (settled already,
 * never posted) is counted as completed twice; a cookie still outstanding when its endpoint is gone
 * and its event dispatcher drained is counted as never completed. Both must stay 0.
 */
final class Ledger {
    private final AtomicLong nextCookie = new AtomicLong(1);
    private final Map<Long, Object> outstanding = new ConcurrentHashMap<>();
    final LongAdder posted = new LongAdder();
    final LongAdder completedOk = new LongAdder();
    final LongAdder flushed = new LongAdder();
    final LongAdder completedTwice = new LongAdder();
    final LongAdder neverCompleted = new LongAdder();
    final LongAdder bytesVerified = new LongAdder();
    final LongAdder corrupt = new LongAdder();
    /** Of the corrupt: RDMA Reads that did not bring back what the RDMA Write before them wrote. */
    final LongAdder corruptReads = new LongAdder();
    /** Of the corrupt: echoes whose bytes were wrong, or that came back out of order or for no message sent. */
    final LongAdder corruptEchoes = new LongAdder();
    final LongAdder canaryDamaged = new LongAdder();
    final LongAdder reconnections = new LongAdder();
    final LongAdder stalls = new LongAdder();
    private final Map<DtoStatus, LongAdder> errors = new EnumMap<>(DtoStatus.class);

    Ledger() {
        for (DtoStatus s : DtoStatus.values()) {
            errors.put(s, new LongAdder());
        }
    }

    /** A fresh cookie entered as outstanding with what it stands for. */
    long open(Object what) {
        long cookie = nextCookie.getAndIncrement();
        outstanding.put(cookie, what);
        return cookie;
    }

    /** The post of {@code cookie} failed synchronously: it was never posted. */
    void unpost(long cookie) {
        outstanding.remove(cookie);
    }

    /** The post of {@code cookie} returned: it is posted. */
    void posted() {
        posted.increment();
    }

    /**
     * Settles {@code cookie} with {@code status}.
     *
     * @return what the cookie stood for, or null if it was not outstanding (counted as completed twice)
     */
    Object settle(long cookie, DtoStatus status) {
        Object what = outstanding.remove(cookie);
        if (what == null) {
            completedTwice.increment();
            return null;
        }
        if (status == DtoStatus.SUCCESS) {
            completedOk.increment();
        } else if (status == DtoStatus.FLUSHED) {
            flushed.increment();
        } else {
            errors.get(status).increment();
        }
        return what;
    }

    /** {@code cookie} will never complete: its endpoint is gone and its dispatcher drained. */
    void lost(long cookie) {
        if (outstanding.remove(cookie) != null) {
            neverCompleted.increment();
        }
    }

    /** DTOs completed with an error other than FLUSHED, by status. */
    Map<DtoStatus, Long> errors() {
        Map<DtoStatus, Long> m = new EnumMap<>(DtoStatus.class);
        errors.forEach((s, n) -> {
            if (n.sum() > 0) {
                m.put(s, n.sum());
            }
        });
        return m;
    }

    /** Cookies outstanding now. */
    int outstanding() {
        return outstanding.size();
    }
}
