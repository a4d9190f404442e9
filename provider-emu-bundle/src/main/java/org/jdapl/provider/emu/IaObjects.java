package org.jdapl.provider.emu;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.HandleType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The objects an IA owns (its asynchronous EVD included), and the order they are destroyed in when
 * the IA closes, which its {@link CloseKind} picks: on the consumer's close EVDs and CNOs first
 * (their waiters released), then EPs (their connections closed, their DTOs flushed); when the
 * provider leaves, EPs first, then EVDs and CNOs; then requests and service points, RMRs and SRQs,
 * LMRs, last PZs, so that no object is destroyed while another still refers to it. Used under the IA's domain lock.
 *
 * <p>Behaviours: OBJ_01: ABRUPT close frees every object.
 */
final class IaObjects {
    private static final Logger LOG = LoggerFactory.getLogger(IaObjects.class);
    /** The longest a close waits for the threads it released to leave their waits. */
    static final long RELEASE_BOUND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Set<EmuObject> objects = new LinkedHashSet<>();
    /** The EVDs and CNOs the last {@link #destroyAll} released, for {@link #awaitReleased}. */
    private volatile List<EmuObject> released = List.of();
    private final IaCounts counts = new IaCounts();

    <T extends EmuObject> T add(T object) {
        objects.add(object);
        counts.created(object);
        return object;
    }

    void remove(EmuObject object) {
        if (objects.remove(object)) {
            counts.freed(object);
        }
    }

    /** The IA's counters (DAT_COUNTERS). */
    IaCounts counts() {
        return counts;
    }

    /** The live EVDs, in creation order (a copy). */
    List<EmuEvd> evds() {
        List<EmuEvd> evds = new ArrayList<>();
        for (EmuObject o : objects) {
            if (o instanceof EmuEvd evd && !evd.isFreed()) {
                evds.add(evd);
            }
        }
        return evds;
    }

    int size() {
        return objects.size();
    }

    /** The live EPs, in creation order (a copy: the caller may change the table meanwhile). */
    List<EmuEp> endpoints() {
        List<EmuEp> eps = new ArrayList<>();
        for (EmuObject o : objects) {
            if (o instanceof EmuEp ep && !ep.isFreed()) {
                eps.add(ep);
            }
        }
        return eps;
    }

    /** Revokes the RMRs bound through {@code ep} (the EP is freed). */
    void revokeEpScopeRmrs(EmuEp ep) {
        for (EmuObject o : objects) {
            if (o instanceof EmuRmr rmr) {
                rmr.revokeIfBoundTo(ep);
            }
        }
    }

    /** Adds one count per object kind to {@code counts}. */
    void countInto(Map<HandleType, Integer> counts) {
        for (EmuObject o : objects) {
            counts.merge(o.kind(), 1, Integer::sum);
        }
    }

    /**
     * Why an IA closes, which picks the order its objects are destroyed in.
     *
     * <p>Behaviours: OBJ_11.
     */
    enum CloseKind {
        /**
         * The consumer closes the IA ({@code dat_ia_close}): the EVDs and CNOs die first, so that every
         * thread waiting on one is released at once, before any connection is torn down (nothing is
         * queued on a freed EVD, so the flushes of the EPs' DTOs that follow queue nothing either); the
         * peers of connected EPs see DISCONNECTED.
         */
        CONSUMER,
        /**
         * The IA breaks under its consumer (the provider goes away, REG_06): the connections are torn
         * down first, so that the consumer's waiters see what became of them (BROKEN or DISCONNECTED,
         * their DTOs FLUSHED) before the EVDs die; the peers of connected EPs see BROKEN.
         */
        PROVIDER_LEAVING
    }

    /**
     * Destroys every object in the close order of {@code kind} ({@link CloseKind}); the table is empty
     * afterwards. {@code fabric} is told once the EVDs are gone, so that a waiter polling its input
     * looks at its queue again.
     *
     * <p>Behaviours: OBJ_01, OBJ_11.
     */
    void destroyAll(CloseKind kind, Fabric fabric) {
        boolean broken = kind == CloseKind.PROVIDER_LEAVING;
        List<EmuObject> all = new ArrayList<>(objects);
        List<EmuObject> released = new ArrayList<>();
        this.released = released;
        if (kind == CloseKind.PROVIDER_LEAVING) {
            teardownEps(all, true);
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuEvd evd when !evd.isFreed() -> {
                    evd.destroy();
                    released.add(evd);
                }
                case EmuCno cno when !cno.isFreed() -> {
                    cno.destroy();
                    released.add(cno);
                }
                default -> {
                }
            }
        }
        fabric.wakePoller();
        teardownEps(all, broken);
        for (EmuObject o : all) {
            switch (o) {
                case EmuCr cr when !cr.isFreed() -> cr.destroy();
                case EmuPsp psp when !psp.isFreed() -> psp.destroy();
                case EmuRsp rsp when !rsp.isFreed() -> rsp.destroy();
                case EmuCsp csp when !csp.isFreed() -> csp.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuRmr rmr when !rmr.isFreed() -> rmr.destroy();
                case EmuSrq srq when !srq.isFreed() -> srq.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuLmr lmr when !lmr.isFreed() -> lmr.destroy();
                case EmuCno cno when !cno.isFreed() -> cno.destroy();
                default -> {
                }
            }
        }
        for (EmuObject o : all) {
            switch (o) {
                case EmuEvd evd when !evd.isFreed() -> evd.destroy();
                case EmuPz pz -> pz.markFreed();
                default -> {
                }
            }
        }
        objects.clear();
    }

    /** Tears down every live EP's connection; {@code broken}: its peer sees BROKEN, not DISCONNECTED. */
    private static void teardownEps(List<EmuObject> all, boolean broken) {
        for (EmuObject o : all) {
            if (o instanceof EmuEp ep && !ep.isFreed()) {
                ep.teardown(broken);
            }
        }
    }

    /**
     * Waits, up to {@link #RELEASE_BOUND_NANOS}, until no thread is left in a wait on the EVDs and CNOs
     * that {@link #destroyAll} released (no lock held, by the closing thread): their threads were woken
     * first, and a close that returns has them out of the provider, on a machine whose CPUs are busy too.
     *
     * <p>Behaviours: OBJ_11.
     */
    void awaitReleased(String ia) {
        List<EmuObject> waited = released;
        released = List.of();
        long end = System.nanoTime() + RELEASE_BOUND_NANOS;
        for (EmuObject o : waited) {
            while (hasWaiters(o)) {
                if (System.nanoTime() - end > 0) {
                    LOG.debug("IA {}: threads released from their waits were still in them {} ms after the close",
                            ia, TimeUnit.NANOSECONDS.toMillis(RELEASE_BOUND_NANOS));
                    return;
                }
                Thread.yield();
            }
        }
    }

    private static boolean hasWaiters(EmuObject o) {
        return switch (o) {
            case EmuEvd evd -> evd.hasWaiters();
            case EmuCno cno -> cno.hasWaiters();
            default -> false;
        };
    }
}
