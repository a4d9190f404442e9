package org.jdapl.conformance.cases;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;

/** Bounded waits on EVDs and checks of what they deliver. */
public final class Events {
    private Events() {
    }

    private static long micros(Duration d) {
        return Math.max(1, d.toNanos() / 1000);
    }

    /** The next event of the EVD, or an AssertionError naming {@code what} if none comes in time. */
    public static DatEvent next(EventDispatcher evd, Duration timeout, String what) {
        try {
            return evd.waitEvent(micros(timeout));
        } catch (DatException e) {
            if (e.type() == DatReturnType.TIMEOUT_EXPIRED) {
                throw new AssertionError("no " + what + " within " + timeout);
            }
            throw e;
        }
    }

    /** Fails if any event arrives on the EVD within {@code grace}. */
    public static void none(EventDispatcher evd, Duration grace, String what) {
        DatEvent e;
        try {
            e = evd.waitEvent(micros(grace));
        } catch (DatException x) {
            if (x.type() == DatReturnType.TIMEOUT_EXPIRED) {
                return;
            }
            throw x;
        }
        throw new AssertionError("unexpected " + describe(e) + " " + what);
    }

    /** Takes everything queued now, without waiting. */
    public static List<DatEvent> drainNow(EventDispatcher evd) {
        List<DatEvent> events = new ArrayList<>();
        for (var e = evd.dequeue(); e.isPresent(); e = evd.dequeue()) {
            events.add(e.get());
        }
        return events;
    }

    /** Every event that arrives within {@code d}. */
    public static List<DatEvent> drainFor(EventDispatcher evd, Duration d) {
        List<DatEvent> events = new ArrayList<>();
        long deadline = System.nanoTime() + d.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                events.addAll(drainNow(evd));
                return events;
            }
            try {
                events.add(evd.waitEvent(Math.max(1, left / 1000)));
            } catch (DatException e) {
                if (e.type() != DatReturnType.TIMEOUT_EXPIRED) {
                    throw e;
                }
            }
        }
    }

    /** Waits for a connection event and fails unless it is {@code number} for {@code ep}. */
    public static DatEvent.Connection connection(EventDispatcher evd, EventNumber number, Endpoint ep,
                                                 Duration timeout, String what) {
        DatEvent e = next(evd, timeout, number + " " + what);
        if (!(e instanceof DatEvent.Connection c) || c.number() != number) {
            throw new AssertionError(what + ": expected " + number + " but got " + describe(e));
        }
        if (c.ep() != ep) {
            throw new AssertionError(what + ": " + number + " names another EP");
        }
        return c;
    }

    /** Waits for a connection event and fails unless it is one of {@code numbers} for {@code ep}. */
    public static DatEvent.Connection connectionOneOf(EventDispatcher evd, Set<EventNumber> numbers, Endpoint ep,
                                                      Duration timeout, String what) {
        DatEvent e = next(evd, timeout, "one of " + numbers + " " + what);
        if (!(e instanceof DatEvent.Connection c) || !numbers.contains(c.number())) {
            throw new AssertionError(what + ": expected one of " + numbers + " but got " + describe(e));
        }
        if (c.ep() != ep) {
            throw new AssertionError(what + ": " + c.number() + " names another EP");
        }
        return c;
    }

    /** Waits for a connection request event. */
    public static DatEvent.ConnectionRequest request(EventDispatcher evd, Duration timeout, String what) {
        DatEvent e = next(evd, timeout, "connection request " + what);
        if (!(e instanceof DatEvent.ConnectionRequest cr)) {
            throw new AssertionError(what + ": expected a connection request but got " + describe(e));
        }
        return cr;
    }

    /**
     * Collects the DTO completions of exactly the given cookies, each exactly once, from an EVD that
     * carries nothing else, in arrival order; then checks that nothing more arrives within the grace.
     */
    public static Map<Long, DatEvent.DtoCompletion> completions(EventDispatcher evd, Collection<Long> cookies,
                                                                Rig rig, String what) {
        Map<Long, DatEvent.DtoCompletion> got = collect(evd, cookies, rig.eventTimeout(), what);
        none(evd, rig.grace(), "after the completions " + what);
        return got;
    }

    /** As {@link #completions} without the final grace check. */
    public static Map<Long, DatEvent.DtoCompletion> collect(EventDispatcher evd, Collection<Long> cookies,
                                                            Duration timeout, String what) {
        Set<Long> wanted = new HashSet<>(cookies);
        Map<Long, DatEvent.DtoCompletion> got = new LinkedHashMap<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (got.size() < wanted.size()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                Set<Long> missing = new HashSet<>(wanted);
                missing.removeAll(got.keySet());
                throw new AssertionError(what + ": no completion for cookies " + missing + " within " + timeout);
            }
            DatEvent e = next(evd, Duration.ofNanos(left), "completion " + what);
            if (!(e instanceof DatEvent.DtoCompletion d)) {
                throw new AssertionError(what + ": expected DTO completions but got " + describe(e));
            }
            accept(d, wanted, got, what);
        }
        return got;
    }

    /**
     * Collects, from one EVD and in arrival order, the DTO and RMR bind completions of exactly the
     * given cookies (each once) and, if {@code until} is not null, that one connection event for
     * {@code ep}; fails on anything else. Returns when all have arrived.
     */
    public static List<DatEvent> gather(EventDispatcher evd, Set<Long> cookies, EventNumber until, Endpoint ep,
                                        Duration timeout, String what) {
        List<DatEvent> events = new ArrayList<>();
        Set<Long> seen = new HashSet<>();
        boolean untilSeen = until == null;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (seen.size() < cookies.size() || !untilSeen) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                Set<Long> missing = new HashSet<>(cookies);
                missing.removeAll(seen);
                throw new AssertionError(what + ": within " + timeout + " missing completions " + missing
                        + (untilSeen ? "" : " and " + until));
            }
            DatEvent e = next(evd, Duration.ofNanos(left), "event " + what);
            if (e instanceof DatEvent.Connection c && c.number() == until && c.ep() == ep && !untilSeen) {
                untilSeen = true;
                events.add(e);
                continue;
            }
            long cookie = switch (e) {
                case DatEvent.DtoCompletion d -> d.cookie();
                case DatEvent.RmrBindCompletion b -> b.cookie();
                default -> throw new AssertionError(what + ": unexpected " + describe(e));
            };
            if (!cookies.contains(cookie)) {
                throw new AssertionError(what + ": completion of a cookie never posted: " + describe(e));
            }
            if (!seen.add(cookie)) {
                throw new AssertionError(what + ": cookie " + cookie + " completed twice");
            }
            events.add(e);
        }
        return events;
    }

    /** The status of a DTO (also an extended one) or RMR bind completion. */
    public static DtoStatus status(DatEvent e) {
        return switch (e) {
            case DatEvent.DtoCompletion d -> d.status();
            case DatEvent.ExtendedDtoCompletion x -> x.status();
            case DatEvent.RmrBindCompletion b -> b.status();
            default -> throw new IllegalArgumentException("not a completion: " + describe(e));
        };
    }

    /** The cookie of a DTO or RMR bind completion. */
    public static long cookie(DatEvent e) {
        return switch (e) {
            case DatEvent.DtoCompletion d -> d.cookie();
            case DatEvent.ExtendedDtoCompletion x -> x.cookie();
            case DatEvent.RmrBindCompletion b -> b.cookie();
            default -> throw new IllegalArgumentException("not a completion: " + describe(e));
        };
    }

    /** Records a DTO completion, failing for an unknown cookie or a second completion. */
    public static void accept(DatEvent.DtoCompletion d, Set<Long> wanted, Map<Long, DatEvent.DtoCompletion> got,
                              String what) {
        if (!wanted.contains(d.cookie())) {
            throw new AssertionError(what + ": completion of a cookie never posted: " + describe(d));
        }
        if (got.putIfAbsent(d.cookie(), d) != null) {
            throw new AssertionError(what + ": cookie " + d.cookie() + " completed twice");
        }
    }

    /** Fails unless every completion has {@code status}. */
    public static void allStatus(Map<Long, DatEvent.DtoCompletion> got, DtoStatus status, String what) {
        for (DatEvent.DtoCompletion d : got.values()) {
            if (d.status() != status) {
                throw new AssertionError(what + ": cookie " + d.cookie() + " completed " + d.status()
                        + ", expected " + status);
            }
        }
    }

    /** A readable form of an event for messages. */
    public static String describe(DatEvent e) {
        return switch (e) {
            case DatEvent.DtoCompletion d -> "DTO completion(cookie " + d.cookie() + ", " + d.operation() + ", "
                    + d.status() + ", " + d.transferredLength() + " bytes)";
            case DatEvent.Connection c -> "connection event " + c.number();
            case DatEvent.ConnectionRequest r -> "connection request on qualifier " + r.connQual();
            case DatEvent.RmrBindCompletion b -> "RMR bind completion(cookie " + b.cookie() + ", " + b.status() + ")";
            case DatEvent.AsyncError a -> "async error " + a.number() + " (" + a.detail() + ")";
            case DatEvent.Software s -> "software event " + s.pointer();
            case DatEvent.ExtendedDtoCompletion x -> "extended DTO completion(cookie " + x.cookie() + ", "
                    + x.type() + ", " + x.status() + ", " + x.transferredLength() + " bytes, immediate "
                    + x.immediateData() + ")";
            case DatEvent.UdConnection u -> "UD connection event " + u.number();
        };
    }
}
